import { Logger } from '@nestjs/common';
import { parseArgs } from 'node:util';
import { errorMessage } from '../common/error-message';
import { RequestCaller, Scope, SCOPES } from '../common/request-access';
import { withMigratedDatabase } from '../database/cli-data-source';
import { AccessService } from './access.service';
import { ApiKeysRepository } from './api-keys.repository';
import { ApplicationsRepository } from './applications.repository';
import { AuditTrail } from './audit-trail';

const USAGE =
  'usage: npm run keys -- create --app <name> --scope <proxy|read|write|admin> [--scope ...] [--name <name>] [--expires <ISO time>]';

/**
 * `node dist/src/access/keys-cli.js create --app support --scope proxy` (`npm run keys -- ...`): makes an
 * application key without the HTTP API (the first admin key of a service, say), on the database the
 * environment names, migrating it first as a booting service does. The application is created when it
 * does not exist. Prints the key (shown this once) on stdout; both changes are in the audit trail, with
 * no key id. Exits 1 with one line saying why on any failure.
 */
async function main(argv: string[]): Promise<void> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      app: { type: 'string' },
      scope: { type: 'string', multiple: true },
      name: { type: 'string' },
      expires: { type: 'string' },
    },
  });
  const scopes = values.scope ?? [];
  const app = values.app;
  if (positionals[0] !== 'create' || positionals.length !== 1 || !app || scopes.length === 0) {
    throw new Error(USAGE);
  }
  const unknown = scopes.find((scope) => !(SCOPES as readonly string[]).includes(scope));
  if (unknown !== undefined) throw new Error(`unknown scope "${unknown}" (${SCOPES.join(', ')})`);

  // stdout carries the key and nothing else
  Logger.overrideLogger(['error']);
  await withMigratedDatabase(async (dataSource) => {
    const applications = new ApplicationsRepository(dataSource);
    const access = new AccessService(
      dataSource,
      applications,
      new ApiKeysRepository(dataSource),
      new AuditTrail(dataSource),
    );
    const existing = await applications.find(app);
    const application = existing ?? (await access.createApplication(operator(null), app));
    const created = await access.createKey(operator(application), {
      application: application.id,
      scopes: scopes as Scope[],
      name: values.name ?? `${app} ${scopes.join('+')}`,
      expiresAt: values.expires,
    });
    process.stdout.write(`${created.secret}\n`);
    process.stderr.write(
      `key ${created.key.id} (${created.key.scopes.join(', ')}) of application ${application.name}: the key above is shown this once\n`,
    );
  });
}

/** The operator at the command line: the root key's rights, recorded with no key id. */
function operator(application: { id: string; name: string } | null): RequestCaller {
  const applicationRef = application ?? { id: '', name: '' };
  return {
    access: {
      application: applicationRef,
      keyId: null,
      keyName: 'keys command',
      prefix: null,
      root: true,
      scopes: SCOPES,
    },
    actor: { keyId: null, applicationId: application?.id ?? null, requestId: null },
  };
}

main(process.argv.slice(2)).then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`No key created: ${errorMessage(error)}\n`);
    process.exit(1);
  },
);
