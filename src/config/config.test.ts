import { describe, expect, it } from 'vitest';
import { loadConfig, ConfigError } from './config.ts';
import { availableParallelism } from 'node:os';
import { defaultTotalCpus } from '../contracts/sandbox-limits.ts';

function configError(env: Record<string, string>, flags = {}): ConfigError {
  try {
    loadConfig(env, flags);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('defaults to every role on 127.0.0.1:8080 with the embedded database under ./.svc', () => {
    const c = loadConfig({});
    expect(c.roles).toEqual(['conductor', 'runner', 'worker']);
    expect([c.host, c.port, c.databaseUrl]).toEqual(['127.0.0.1', 8080, undefined]);
    expect(c.dataDir).toMatch(/\/\.svc$/);
    expect(Object.isFrozen(c.identity)).toBe(true);
  });

  it("caps the server's young generation at 16 MiB unless SVC_HEAP_* say otherwise, and NODE_OPTIONS wins over them", () => {
    expect(loadConfig({}).heap).toEqual({ youngMiB: 16, growingPercent: 0 });
    expect(loadConfig({ SVC_HEAP_YOUNG_MIB: '0' }).heap).toEqual({ youngMiB: 0, growingPercent: 0 });
    expect(loadConfig({ SVC_HEAP_YOUNG_MIB: '32', SVC_HEAP_GROWING_PERCENT: '50' }).heap).toEqual({ youngMiB: 32, growingPercent: 50 });
    expect(loadConfig({ SVC_HEAP_YOUNG_MIB: '32', SVC_HEAP_GROWING_PERCENT: '50', NODE_OPTIONS: '--max-semi-space-size=64 --heap_growing_percent=30' }).heap).toEqual({ youngMiB: 0, growingPercent: 0 });
    expect(configError({ SVC_HEAP_YOUNG_MIB: '-1' }).message).toBe('SVC_HEAP_YOUNG_MIB: got "-1"; allowed: an integer from 0 to 1024');
  });

  it('takes one address policy for every URL a tenant gives: allow in dev, deny elsewhere, its older names as aliases', () => {
    const live = { AGENT_ORC_ENV: 'live', AGENT_API_KEY_PEPPER: 'pepper-pepper-pepper', SVC_SECRETS_KEY: 'secrets-secrets-key', SVC_BILLING: 'off' };
    expect(loadConfig({}).privateAddresses).toBe('allow');
    expect(loadConfig(live).privateAddresses).toBe('deny');
    expect(loadConfig({ SVC_PRIVATE_ADDRESSES: 'deny' }).privateAddresses).toBe('deny');
    expect(loadConfig({ ...live, SVC_PRIVATE_ADDRESSES: 'allow' }).privateAddresses).toBe('allow');
    // the older names, one kind of URL each once, now set the policy of all of them
    expect(loadConfig({ ...live, SVC_PRIVATE_MCP: 'allow' }).privateAddresses).toBe('allow');
    expect(loadConfig({ SVC_NOTIFY_PRIVATE_WEBHOOKS: 'deny' }).privateAddresses).toBe('deny');
    expect(loadConfig({ SVC_PRIVATE_ADDRESSES: 'deny', SVC_PRIVATE_MCP: 'deny', SVC_NOTIFY_PRIVATE_WEBHOOKS: 'deny' }).privateAddresses).toBe('deny');
    // the runner starts sandbox workers with it, and a worker connects MCP servers under it
    const c = loadConfig({ SVC_PRIVATE_ADDRESSES: 'deny' });
    expect([c.runner.privateAddresses, c.worker.privateAddresses]).toEqual(['deny', 'deny']);
    expect(configError({ SVC_PRIVATE_ADDRESSES: 'deny', SVC_PRIVATE_MCP: 'allow' }).message).toBe(
      'SVC_PRIVATE_MCP: got "allow" while SVC_PRIVATE_ADDRESSES is "deny"; one address policy covers every URL a tenant gives: set SVC_PRIVATE_ADDRESSES alone',
    );
    expect(configError({ SVC_PRIVATE_ADDRESSES: 'sometimes' }).message).toBe('SVC_PRIVATE_ADDRESSES: got "sometimes"; allowed: allow, deny');
  });

  it('runs the embedded cluster as nobody when root, with laptop settings unless SVC_PG_SETTINGS overrides them', () => {
    expect(loadConfig({}).embeddedPostgres).toEqual({ osUser: 'nobody', settings: [] });
    expect(loadConfig({ SVC_PG_OS_USER: 'svc-db', SVC_PG_SETTINGS: ' shared_buffers=128MB  max_connections=100 ' }).embeddedPostgres).toEqual({
      osUser: 'svc-db',
      settings: ['shared_buffers=128MB', 'max_connections=100'],
    });
  });

  it('turns trace export on only when the OTEL_* variables ask for it, per the OpenTelemetry environment spec', () => {
    expect(loadConfig({}).otel).toBeUndefined();
    expect(loadConfig({ OTEL_SERVICE_NAME: 'svc-eu' }).otel).toBeUndefined(); // a name alone exports nothing
    const on = loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SERVICE_NAME: 'svc-eu', SVC_ROLE: 'worker' });
    expect(on.otel).toEqual({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SERVICE_NAME: 'svc-eu' });
    expect(on.worker.otel).toBe(on.otel); // Claude Code and Codex get the same variables
    expect(loadConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }).otel).toBeDefined();
    expect(loadConfig({ OTEL_TRACES_EXPORTER: 'console' }).otel).toBeDefined();
    expect(loadConfig({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).otel).toBeUndefined();
    expect(loadConfig({ OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).otel).toBeUndefined();
    expect(loadConfig({ OTEL_SDK_DISABLED: 'false', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).otel).toBeDefined();
  });

  it.each([
    [{ OTEL_TRACES_EXPORTER: 'zipkin' }, 'OTEL_TRACES_EXPORTER', /got "zipkin"; allowed: otlp, console, none/],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, 'OTEL_EXPORTER_OTLP_PROTOCOL', /got "grpc"; allowed: http\/protobuf, http\/json \(OTLP over gRPC is not bundled\)/],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, 'OTEL_EXPORTER_OTLP_ENDPOINT', /an http\(s\) URL/],
  ])('refuses OTEL settings it cannot honour: %o', (env, variable, message) => {
    const err = configError(env);
    expect(err.variable).toBe(variable);
    expect(err.message).toMatch(message);
  });

  it('listens on 8080 as a conductor or the all-in-one server, on 7070 as a runner or worker without a conductor', () => {
    const port = (role: string) => loadConfig({ SVC_ROLE: role }).port;
    expect(['all', 'conductor', 'conductor,runner', 'conductor,worker'].map(port)).toEqual([8080, 8080, 8080, 8080]);
    expect(['runner', 'worker', 'runner,worker'].map(port)).toEqual([7070, 7070, 7070]);
    expect(loadConfig({ SVC_ROLE: 'runner', PORT: '8080' }).port).toBe(8080);
    expect(loadConfig({ SVC_ROLE: 'worker' }, { port: 0 }).port).toBe(0);
  });

  it('accepts comma lists of roles and lets flags win over the environment', () => {
    expect(loadConfig({ SVC_ROLE: 'runner' }, { role: 'conductor,worker' }).roles).toEqual(['conductor', 'worker']);
    expect(loadConfig({ PORT: '9000' }, { port: '9100' }).port).toBe(9100);
  });

  it.each([
    [{ SVC_ROLE: 'bogus' }, 'SVC_ROLE (--role)', /got "bogus"; allowed: all, conductor, runner, worker/],
    [{ PORT: 'eighty' }, 'PORT', /an integer from 0 to 65535/],
    [{ PORT: '70000' }, 'PORT', /an integer from 0 to 65535/],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL', /"memory", or a postgres:\/\/ URL/],
    [{ AGENT_ORC_ENV: 'live' }, 'AGENT_API_KEY_PEPPER', /required when AGENT_ORC_ENV is "live"/],
    [{ AGENT_API_KEY_PEPPER: 'short' }, 'AGENT_API_KEY_PEPPER', /at least 16 characters/],
    [{ SVC_BOOTSTRAP_TOKEN: 'secret' }, 'SVC_BOOTSTRAP_TOKEN', /ao_<env>_<random>/],
    [{ SVC_RUNNERS: 'http://a:1,ftp://b' }, 'SVC_RUNNERS[1]', /an http\(s\) URL/],
    [{ MODE: 'gpu' }, 'MODE', /allowed: general, runtime_a, runtime_b, all/],
    [{ AGENT_WORKER_STEP_COUNT: '0' }, 'AGENT_WORKER_STEP_COUNT', /from 1 to 1000/],
    [{ SVC_WORKER_PROTOCOL: '2' }, 'SVC_WORKER_PROTOCOL', /from 1 to 1/],
    [{ SVC_RUNNER_URL: 'http://r:7070', SVC_WORKER_TOKEN: 't' }, 'SVC_SESSION_ID', /required in outbound worker mode/],
    [{ SVC_LOG_LEVEL: 'loud' }, 'SVC_LOG_LEVEL', /allowed: debug, info, warn, error, silent/],
    [{ SVC_ROLE: 'runner', AGENT_ORC_ENV: 'live' }, 'SVC_INTERNAL_TOKEN', /required when AGENT_ORC_ENV is "live" \(not dev\) and conductor and runner run in separate processes/],
    [{ SVC_ROLE: 'conductor', AGENT_ORC_ENV: 'live', AGENT_API_KEY_PEPPER: 'p'.repeat(16), SVC_SECRETS_KEY: 's'.repeat(16) }, 'SVC_INTERNAL_TOKEN', /required when AGENT_ORC_ENV is "live"/],
    [{ SVC_INTERNAL_TOKEN: 'short' }, 'SVC_INTERNAL_TOKEN', /at least 16 characters/],
    [{ SVC_DATA_DIR: '/srv/svc', SVC_RUNNER_DATA_DIR: '/srv/svc' }, 'SVC_RUNNER_DATA_DIR', /neither contains nor lies inside the secrets folder \/srv\/svc\/secrets/],
    [{ SVC_DATA_DIR: '/srv/svc', SVC_RUNNER_DATA_DIR: '/srv/svc/secrets/vfs' }, 'SVC_RUNNER_DATA_DIR', /secrets folder/],
    [{ SVC_SANDBOX: 'none' }, 'SVC_SANDBOX', /got "none"; allowed: bwrap, off/],
    [{ SVC_PG_SETTINGS: 'shared_buffers 64MB' }, 'SVC_PG_SETTINGS', /space-separated name=value PostgreSQL settings/],
    [{ SVC_PG_OS_USER: 'no body' }, 'SVC_PG_OS_USER', /an OS user name/],
    [{ SVC_WORKER_SUBSTRATE: 'vm' }, 'SVC_WORKER_SUBSTRATE', /allowed: process, container, hosted_a, hosted_b/],
    [{ SVC_WORKER_IDLE_MS: '5' }, 'SVC_WORKER_IDLE_MS', /from 100 to 86400000/],
    [{ SVC_WORKER_POLL_MS: 'soon' }, 'SVC_WORKER_POLL_MS', /an integer/],
    [{ SVC_WORKER_RELAY: '7070' }, 'SVC_WORKER_RELAY', /<port>:<absolute unix socket path>/],
    [{ SVC_WORKER_SUBSTRATE: 'container', SVC_WORKER_USER: '0:0' }, 'SVC_WORKER_USER', /a non-root numeric uid:gid/],
    [{ SVC_WORKER_IMAGE: 'svc:slim', SVC_WORKER_USER: 'node' }, 'SVC_WORKER_USER', /a non-root numeric uid:gid/],
    [{ SVC_WORKER_IMAGE: 'svc:slim', SVC_WORKER_IMAGE_PULL: 'sometimes' }, 'SVC_WORKER_IMAGE_PULL', /allowed: never, missing, always/],
    [{ SVC_WORKER_IMAGE: 'svc:slim', SVC_WORKER_PROGRAM: 'copy' }, 'SVC_WORKER_PROGRAM', /allowed: image, mount/],
    [{ SVC_WORKER_IMAGE: 'svc:slim', SVC_WORKER_CPUS: '0.5' }, 'SVC_WORKER_CPUS', /no longer read; a container's limits are its session's: SVC_SANDBOX_CPUS/],
    [{ SVC_WORKER_IMAGE: 'svc:slim', SVC_WORKER_MEMORY_MIB: '512' }, 'SVC_WORKER_MEMORY_MIB', /SVC_SANDBOX_MEMORY_MIB/],
    [{ SVC_SANDBOX_TOTAL_CPUS: '0' }, 'SVC_SANDBOX_TOTAL_CPUS', /got "0"; allowed: a number of CPUs of at least 0.1/],
    [{ SVC_SANDBOX_TOTAL_CPUS: 'all' }, 'SVC_SANDBOX_TOTAL_CPUS', /a number of CPUs/],
  ])('refuses %o naming %s and what is allowed', (env, variable, allowed) => {
    const err = configError(env as Record<string, string>);
    expect(err.variable).toBe(variable);
    expect(err.message).toMatch(allowed);
  });

  it('waits 24 hours for an approval by default, takes whole seconds, and refuses anything else', () => {
    expect(loadConfig({}).approvalTimeoutSeconds).toBe(86_400);
    expect(loadConfig({ SVC_APPROVAL_TIMEOUT_S: '600' }).approvalTimeoutSeconds).toBe(600);
    for (const bad of ['0', 'soon', '99999999']) expect(configError({ SVC_APPROVAL_TIMEOUT_S: bad }).variable, bad).toBe('SVC_APPROVAL_TIMEOUT_S');
  });

  it('mints run tokens for 15 minutes by default, 2 seconds to a day, and refuses anything else', () => {
    expect(loadConfig({}).identity.runTokenTtlSeconds).toBe(900);
    expect(loadConfig({ SVC_RUN_TOKEN_TTL_S: '120' }).identity.runTokenTtlSeconds).toBe(120);
    for (const bad of ['1', 'long', '86401']) expect(configError({ SVC_RUN_TOKEN_TTL_S: bad }).variable, bad).toBe('SVC_RUN_TOKEN_TTL_S');
  });

  it('takes a webhook schedule of whole seconds, 27.6 hours of attempts by default, and refuses anything else', () => {
    const c = loadConfig({});
    expect(c.notifications.webhookSchedule).toEqual([0, 5, 300, 1800, 7200, 18_000, 36_000, 36_000]);
    expect(c.notifications.webhookSchedule.reduce((a, b) => a + b, 0)).toBeGreaterThan(24 * 3600);
    expect([c.notifications.webhookDisableAfterSeconds, c.notifications.webhookRotationOverlapSeconds]).toEqual([259_200, 86_400]);
    expect(loadConfig({ SVC_WEBHOOK_SCHEDULE_S: ' 0, 1,3 ' }).notifications.webhookSchedule).toEqual([0, 1, 3]);
    for (const bad of ['1,x', '-1', '0,,1', '1.5', '999999']) {
      expect(configError({ SVC_WEBHOOK_SCHEDULE_S: bad }).message, bad).toMatch(/^SVC_WEBHOOK_SCHEDULE_S: got ".*"; expected 1 to 30 comma-separated whole seconds/);
    }
  });

  it('reads the sandbox worker settings, with defaults', () => {
    expect(loadConfig({}).runner).toMatchObject({ workerSubstrate: 'process', workerIdleMs: 300_000, workerPollMs: 25_000, workerTokenSecret: undefined });
    const c = loadConfig({ SVC_WORKER_IDLE_MS: '1000', SVC_WORKER_TOKEN_SECRET: 'k'.repeat(32), SVC_WORKER_RELAY: '7070:/run/svc/runner.sock', OPENAI_API_KEY: 'sk' });
    expect(c.runner).toMatchObject({ workerIdleMs: 1000, workerTokenSecret: 'k'.repeat(32), providerEnv: { OPENAI_API_KEY: 'sk' } });
    expect(c.worker.relay).toEqual({ port: 7070, socketPath: '/run/svc/runner.sock' });
  });

  it('builds the container substrate only when asked for, with its defaults', () => {
    expect(loadConfig({}).runner.container).toBeUndefined();
    expect(loadConfig({ SVC_WORKER_SUBSTRATE: 'container' }).runner.container).toEqual({
      dockerHost: undefined, image: 'svc:slim', pull: 'missing', program: 'image', uid: 1000, gid: 1000,
    });
    const c = loadConfig({ SVC_WORKER_IMAGE: 'python:3.13-bookworm', DOCKER_HOST: 'unix:///run/podman/podman.sock', SVC_WORKER_PROGRAM: 'mount', SVC_WORKER_USER: '2000:3000', SVC_SANDBOX_CPUS: '0.5' });
    expect(c.runner).toMatchObject({ workerSubstrate: 'process', container: { image: 'python:3.13-bookworm', dockerHost: 'unix:///run/podman/podman.sock', program: 'mount', uid: 2000, gid: 3000 } });
    // a container's limits are the sandbox limits of its session, as every sandbox's
    expect(c.sandboxLimits.defaults).toMatchObject({ cpus: 0.5 });
  });

  it('caps all sandboxes together at the host CPUs but one and a half, at least half a CPU, unless the operator says', () => {
    expect(loadConfig({}).sandboxLimits.totalCpus).toBe(Math.max(0.5, availableParallelism() - 1.5));
    expect(loadConfig({ SVC_SANDBOX_TOTAL_CPUS: '1.5' }).sandboxLimits.totalCpus).toBe(1.5);
    expect([defaultTotalCpus(1), defaultTotalCpus(2), defaultTotalCpus(4), defaultTotalCpus(16)]).toEqual([0.5, 0.5, 2.5, 14.5]);
  });

  it('keeps secrets in their own folder and asks outside dev for the internal token only where roles are split', () => {
    const c = loadConfig({ SVC_DATA_DIR: '/srv/svc' });
    expect([c.secretsDir, c.runner.dataDir, c.runner.sandbox]).toEqual(['/srv/svc/secrets', '/srv/svc/runner', 'bwrap']);
    const live = { AGENT_ORC_ENV: 'live', AGENT_API_KEY_PEPPER: 'p'.repeat(16), SVC_SECRETS_KEY: 's'.repeat(16), SVC_BILLING: 'off' };
    expect(loadConfig(live).internalToken).toBeUndefined(); // all in one process: in-process calls only
    expect(loadConfig({ ...live, SVC_ROLE: 'worker' }).internalToken).toBeUndefined();
    expect(loadConfig({ ...live, SVC_ROLE: 'runner', SVC_INTERNAL_TOKEN: 't'.repeat(16) }).internalToken).toBe('t'.repeat(16));
  });

  it('takes provider variables for the worker from the environment it is given', () => {
    const c = loadConfig({ OPENAI_API_KEY: 'sk-1', ANTHROPIC_BASE_URL: 'http://x', UNRELATED: 'y' });
    expect(c.worker.providerEnv).toEqual({ OPENAI_API_KEY: 'sk-1', ANTHROPIC_BASE_URL: 'http://x' });
  });

  it("hands a worker each provider's own variables, and no other AWS or Azure ones", () => {
    const given = {
      GOOGLE_GENERATIVE_AI_API_KEY: 'g', GOOGLE_GENERATIVE_AI_BASE_URL: 'http://g', AWS_REGION: 'eu-west-1', AWS_ACCESS_KEY_ID: 'a', AWS_SECRET_ACCESS_KEY: 's',
      AWS_SESSION_TOKEN: 't', AWS_BEARER_TOKEN_BEDROCK: 'b', AWS_ENDPOINT_URL_BEDROCK_RUNTIME: 'http://b', AZURE_API_KEY: 'z', AZURE_RESOURCE_NAME: 'r',
      AZURE_BASE_URL: 'http://z', AZURE_API_VERSION: 'v1', MISTRAL_API_KEY: 'm', MISTRAL_BASE_URL: 'http://m', XAI_API_KEY: 'x', XAI_BASE_URL: 'http://x',
      GROQ_API_KEY: 'q', GROQ_BASE_URL: 'http://q', OPENROUTER_API_KEY: 'o', OPENROUTER_BASE_URL: 'http://o',
    };
    const c = loadConfig({ ...given, AWS_PROFILE: 'prod', AZURE_CLIENT_SECRET: 'no', GOOGLE_APPLICATION_CREDENTIALS: '/k.json' });
    expect(c.worker.providerEnv).toEqual(given);
  });
});
