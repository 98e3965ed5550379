export { startCluster, type EmbeddedCluster, type EmbeddedOptions } from './cluster.ts';
export { clusterDir, socketDirFor, socketUrl } from './layout.ts';
export { ensureTemplate, APP_ROLE, APP_DATABASE, SUPERUSER, type TemplateSchema } from './template.ts';
export { clusterUser } from './os-user.ts';
