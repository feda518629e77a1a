// Nest's default logger prints coloured lines in a format of its own; the unit specs' loggers made
// outside an app (new Logger(...)) log through it. A passing run prints only Jest's report.
require('@nestjs/common').Logger.overrideLogger(false);
process.env.LOG_LEVEL ??= 'silent';
