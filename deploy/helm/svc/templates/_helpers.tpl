{{/*
Keep to the template subset that test/support/helm-template.ts renders (listed at its top): the chart is checked by
rendering it there, since Helm cannot be installed on the machines that run the tests.
*/}}

{{/* <release>-svc, or the release name alone when it already says svc; at most 52 characters (StatefulSet pods add -N). */}}
{{- define "svc.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 52 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if eq .Release.Name $name -}}
{{- .Release.Name | trunc 52 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 52 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Labels of every object; called with (dict "ctx" $ "component" "<role>"). */}}
{{- define "svc.labels" -}}
{{ include "svc.selectorLabels" . }}
app.kubernetes.io/version: {{ default .ctx.Chart.AppVersion .ctx.Values.image.tag | quote }}
app.kubernetes.io/managed-by: {{ .ctx.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .ctx.Chart.Name .ctx.Chart.Version }}
{{- end -}}

{{- define "svc.selectorLabels" -}}
app.kubernetes.io/name: {{ default .ctx.Chart.Name .ctx.Values.nameOverride }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* The image of a role; called with (dict "ctx" $ "slim" true|false). */}}
{{- define "svc.image" -}}
{{- $tag := default .ctx.Chart.AppVersion .ctx.Values.image.tag -}}
{{- if .slim -}}
{{- printf "%s:%s%s" .ctx.Values.image.repository $tag .ctx.Values.image.slimSuffix -}}
{{- else -}}
{{- printf "%s:%s" .ctx.Values.image.repository $tag -}}
{{- end -}}
{{- end -}}

{{- define "svc.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "svc.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "svc.secretName" -}}
{{- default (include "svc.fullname" .) .Values.secrets.existingSecret -}}
{{- end -}}

{{/* The Secret holding DATABASE_URL: the operator's, or the chart's <fullname>-database. */}}
{{- define "svc.databaseSecretName" -}}
{{- if .Values.database.existingSecret -}}
{{- .Values.database.existingSecret -}}
{{- else -}}
{{- printf "%s-database" (include "svc.fullname" .) -}}
{{- end -}}
{{- end -}}

{{- define "svc.databaseSecretKey" -}}
{{- if .Values.database.existingSecret -}}
{{- .Values.database.existingSecretKey -}}
{{- else -}}
DATABASE_URL
{{- end -}}
{{- end -}}

{{/* The runners' headless Service: it gives each runner pod a stable name, <pod>.<service>.<namespace>.svc. */}}
{{- define "svc.runnerService" -}}
{{- printf "%s-runner" (include "svc.fullname" .) -}}
{{- end -}}

{{/* SVC_RUNNERS: the URL of every runner pod, exactly as each announces itself (SVC_RUNNER_PUBLIC_URL). */}}
{{- define "svc.runnerUrls" -}}
{{- $urls := list -}}
{{- $service := include "svc.runnerService" . -}}
{{- range $i := until (int .Values.runner.replicas) -}}
{{- $urls = append $urls (printf "http://%s-%d.%s.%s.svc:%d" $service $i $service $.Release.Namespace (int $.Values.runner.port)) -}}
{{- end -}}
{{- join "," $urls -}}
{{- end -}}

{{/* A variable from the svc Secret; called with (dict "ctx" $ "name" "<VARIABLE>" ["optional" true]). */}}
{{- define "svc.secretEnv" -}}
- name: {{ .name }}
  valueFrom:
    secretKeyRef:
      name: {{ include "svc.secretName" .ctx }}
      key: {{ .name }}
      {{- if .optional }}
      optional: true
      {{- end }}
{{- end -}}

{{/* What every role's container shares: environment, log level, port, data folder, extra variables; called with (dict "ctx" $ "port" <its port> "env" <its env>). */}}
{{- define "svc.commonEnv" -}}
- name: AGENT_ORC_ENV
  value: {{ .ctx.Values.environment | quote }}
- name: SVC_LOG_LEVEL
  value: {{ .ctx.Values.logLevel | quote }}
- name: PORT
  value: {{ .port | quote }}
- name: SVC_HOST
  value: "0.0.0.0"
- name: SVC_DATA_DIR
  value: /data
{{- range $name, $value := .env }}
- name: {{ $name }}
  value: {{ $value | toString | quote }}
{{- end }}
{{- end -}}

{{- define "svc.envFrom" -}}
{{- range $name := . }}
- secretRef:
    name: {{ $name }}
{{- end }}
{{- end -}}

{{/* The probes of a role: readiness on /readyz, liveness on the given path; called with (dict "live" "/healthz"). */}}
{{- define "svc.probes" -}}
startupProbe:
  httpGet:
    path: {{ .live }}
    port: http
  periodSeconds: 2
  failureThreshold: 90
readinessProbe:
  httpGet:
    path: /readyz
    port: http
  periodSeconds: 5
  timeoutSeconds: 3
  failureThreshold: 2
livenessProbe:
  httpGet:
    path: {{ .live }}
    port: http
  periodSeconds: 10
  timeoutSeconds: 3
  failureThreshold: 3
{{- end -}}
