export { buildApp, inProcessFetch, type BuiltApp } from './app.ts';
export { startServer, type RunningServer } from './server.ts';
export { ROLES } from './roles.ts';
export { VERSION } from './version.ts';
export { portlessModeOf, startPortless } from './portless.ts';
