import packageJson from '../package.json';

/** What the service calls itself in its log and API document. */
export const APP_TITLE = 'Profile Memory Service';
/** The package's version (package.json), reported at boot and in the API document. */
export const APP_VERSION: string = packageJson.version;
