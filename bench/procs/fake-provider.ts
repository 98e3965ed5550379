/**
 * The fake model provider (test/support/fake-provider.ts) in a process of its own, so a benchmark's client load and
 * the provider do not share one event loop. Prints `fake provider listening on <url>` (the `/v1` base URL).
 * The request log is cleared every second: it holds every request body and would otherwise grow without bound.
 */
import { startFakeProvider } from '../../test/support/fake-provider.ts';

const fake = await startFakeProvider();
setInterval(() => (fake.requests.length = 0), 1000).unref();
process.stdout.write(`fake provider listening on ${fake.url}\n`);
const stop = () => void fake.close().then(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
