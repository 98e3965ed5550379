/** The secret box lives in shared/ (the conductor seals notification webhook secrets with it too); kept here for existing imports. */
export * from '../../shared/secret-box.ts';
