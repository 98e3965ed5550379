/** The conductor's job queue (pg-boss on the app's PostgreSQL): see jobs.ts. */
export { createJobs, jobsSchemaSql, JOBS_SCHEMA, type Jobs, type JobsDeps, type JobHandler, type JobContext, type QueueSettings, type SendOptions } from './jobs.ts';
export { jobsFeature } from './jobs.feature.ts';
