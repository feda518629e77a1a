import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';

/**
 * The packaging files, checked without Docker or Helm (neither is available here): docker-compose.yml
 * and the chart's values are parsed as YAML; the chart's templates are parsed after their template
 * actions are taken out (whole-line actions dropped, inline ones replaced by a placeholder), and every
 * value and helper they use is checked to exist.
 */
const ROOT = join(__dirname, '..');
const CHART = join(ROOT, 'deploy', 'helm', 'profile-memory-service');
const PLACEHOLDER = 'TEMPLATED';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- parsed YAML, poked into freely
type Yaml = Record<string, any>;

const readText = (...parts: string[]) => readFileSync(join(...parts), 'utf8');
const templateFiles = () => readdirSync(join(CHART, 'templates')).filter((file) => file.endsWith('.yaml'));

/** The YAML shape of a template: its Go template actions taken out. */
function templateSkeleton(file: string): Yaml {
  const text = readText(CHART, 'templates', file)
    .split('\n')
    .filter((line) => !/^\s*\{\{.*\}\}\s*$/.test(line))
    .map((line) => line.replace(/\{\{.*?\}\}/g, PLACEHOLDER))
    .join('\n');
  const documents = parseAllDocuments(text);
  expect(documents).toHaveLength(1);
  expect(documents[0].errors).toEqual([]);
  return documents[0].toJS() as Yaml;
}

/** How many template blocks (if, with, range, define) are open at the first line containing `needle`. */
function blockDepthAt(text: string, needle: string): number {
  const before = text.slice(0, text.indexOf(needle));
  expect(before.length).toBeLessThan(text.length);
  const opened = before.match(/\{\{-?\s*(if|with|range|define)\b/g)?.length ?? 0;
  const closed = before.match(/\{\{-?\s*end\s*-?\}\}/g)?.length ?? 0;
  return opened - closed;
}

/** The body of a helper of _helpers.tpl. */
function helper(name: string): string {
  const text = readText(CHART, 'templates', '_helpers.tpl');
  const start = text.indexOf(`{{- define "${name}" -}}`);
  expect(start).toBeGreaterThanOrEqual(0);
  let depth = 0;
  for (const match of text.slice(start).matchAll(/\{\{-?\s*(if|with|range|define|end)\b/g)) {
    depth += match[1] === 'end' ? -1 : 1;
    if (depth === 0) return text.slice(start, start + match.index);
  }
  throw new Error(`unterminated helper ${name}`);
}

const find = (files: string[], kind: string) =>
  files.map((file) => ({ file, doc: templateSkeleton(file) })).find(({ doc }) => doc.kind === kind)!;

describe('Packaging files', () => {
  describe('Helm chart', () => {
    const values = parse(readText(CHART, 'values.yaml')) as Yaml;
    const files = templateFiles();

    it('has a valid Chart.yaml and templates that all parse', () => {
      const chart = parse(readText(CHART, 'Chart.yaml')) as Yaml;
      expect(chart).toMatchObject({ apiVersion: 'v2', name: 'profile-memory-service', type: 'application' });
      expect(files).toEqual(
        expect.arrayContaining(['deployment.yaml', 'service.yaml', 'secret.yaml', 'configmap.yaml']),
      );
      for (const file of files) expect(templateSkeleton(file)).toHaveProperty('kind');
    });

    it('uses only values that values.yaml defines and helpers that _helpers.tpl defines', () => {
      const helpers = readText(CHART, 'templates', '_helpers.tpl');
      const defined = new Set([...helpers.matchAll(/define "([^"]+)"/g)].map((match) => match[1]));
      for (const file of [...files, '_helpers.tpl', 'NOTES.txt']) {
        const text = readText(CHART, 'templates', file);
        for (const [, path] of text.matchAll(/\.Values\.([A-Za-z0-9_.]+)/g)) {
          const value = path
            .split('.')
            .reduce<unknown>((node, key) => (node as Yaml | undefined)?.[key], values);
          expect({ file, path, defined: value !== undefined }).toEqual({ file, path, defined: true });
        }
        for (const [, name] of text.matchAll(/include "([^"]+)"/g)) {
          expect({ file, helper: name, defined: defined.has(name) }).toEqual({
            file,
            helper: name,
            defined: true,
          });
        }
        const opened = text.match(/\{\{-?\s*(if|with|range|define)\b/g)?.length ?? 0;
        const closed = text.match(/\{\{-?\s*end\s*-?\}\}/g)?.length ?? 0;
        expect({ file, opened }).toEqual({ file, opened: closed });
      }
    });

    it('probes /health for liveness and startup, /ready for readiness, on the named http port', () => {
      const { doc } = find(files, 'Deployment');
      const container = doc.spec.template.spec.containers[0];
      expect(container.ports).toEqual([{ name: 'http', containerPort: PLACEHOLDER, protocol: 'TCP' }]);
      for (const probe of ['livenessProbe', 'readinessProbe', 'startupProbe']) {
        expect(container[probe].httpGet.port).toBe('http');
      }
      expect(values.probes.liveness.path).toBe('/health');
      expect(values.probes.startup.path).toBe('/health');
      expect(values.probes.readiness.path).toBe('/ready');
      expect(values.containerPort).toBe(3000);
      expect(values.resources.requests).toEqual({ cpu: expect.any(String), memory: expect.any(String) });
      expect(values.resources.limits.memory).toEqual(expect.any(String));
    });

    it('reads the keys from a Secret and the rest from a ConfigMap', () => {
      const { doc } = find(files, 'Deployment');
      const container = doc.spec.template.spec.containers[0];
      expect(container.envFrom).toEqual([{ configMapRef: { name: PLACEHOLDER } }]);
      const fromSecret = Object.fromEntries(
        container.env.map((variable: Yaml) => [variable.name, variable.valueFrom.secretKeyRef]),
      );
      expect(Object.keys(fromSecret).sort()).toEqual(
        ['DATABASE_URL', 'LLM_API_KEY', 'REDIS_URL', 'SERVICE_API_KEY', 'UPSTREAM_API_KEY'].sort(),
      );
      for (const [name, ref] of Object.entries(fromSecret)) expect(ref).toMatchObject({ key: name });
      expect(fromSecret.DATABASE_URL.optional).toBeUndefined();
      expect(fromSecret.SERVICE_API_KEY.optional).toBeUndefined(); // pods do not start without the key

      const secret = find(files, 'Secret').doc;
      // every key the pods read is one the chart's Secret can hold (each but DATABASE_URL only when set)
      expect(Object.keys(secret.stringData).sort()).toEqual(Object.keys(fromSecret).sort());
      const configMap = find(files, 'ConfigMap').doc;
      expect(configMap.data).toMatchObject({ HOST: '0.0.0.0', PORT: PLACEHOLDER });
      for (const secretName of Object.keys(fromSecret)) expect(values.config).not.toHaveProperty(secretName);
    });

    it('refuses to deploy without a service key', () => {
      // The chart's Secret always holds SERVICE_API_KEY (outside any condition but "no existing
      // Secret"), through a helper that fails rendering when the value is empty.
      const secretTemplate = readText(CHART, 'templates', 'secret.yaml');
      expect(secretTemplate).toContain('SERVICE_API_KEY: {{ include "pms.serviceApiKey" . | quote }}');
      expect(blockDepthAt(secretTemplate, 'SERVICE_API_KEY:')).toBe(1);
      expect(secretTemplate.split('\n')[0]).toBe('{{- if not .Values.secrets.existingSecret }}');
      expect(helper('pms.serviceApiKey')).toMatch(
        /\{\{- required "secrets\.serviceApiKey is required: [^"]*secrets\.existingSecret[^"]*" \.Values\.secrets\.serviceApiKey \}\}/,
      );
      expect(values.secrets.serviceApiKey).toBe(''); // no default key: the operator must choose one

      // An existing Secret must have the key: checked when it can be read, and the pods need it.
      const deployment = readText(CHART, 'templates', 'deployment.yaml');
      expect(deployment.split('\n')[0]).toBe('{{- include "pms.checkExistingSecret" . }}');
      const check = helper('pms.checkExistingSecret');
      expect(check).toContain('lookup "v1" "Secret" $.Release.Namespace .');
      expect(check).toMatch(
        /if and \$secret \(not \(hasKey \(\$secret\.data \| default dict\) "SERVICE_API_KEY"\)\)/,
      );
      expect(check).toContain('{{- fail (printf "secrets.existingSecret %s has no SERVICE_API_KEY key');

      // Prometheus scrapes with the key, which is never optional
      const monitor = find(files, 'ServiceMonitor').doc;
      expect(monitor.spec.endpoints[0].authorization.credentials).toEqual({
        name: PLACEHOLDER,
        key: 'SERVICE_API_KEY',
      });
    });

    it('runs as a non-root user on a read-only file system with no privileges', () => {
      const pod = find(files, 'Deployment').doc.spec.template.spec;
      expect(pod.securityContext).toBeNull(); // filled from values.podSecurityContext
      expect(values.podSecurityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 });
      expect(values.securityContext).toMatchObject({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'] },
      });
      expect(pod.volumes).toEqual([{ name: 'tmp', emptyDir: {} }]);
      expect(pod.automountServiceAccountToken).toBe(false);
    });

    it('gives streams time to finish on shutdown', () => {
      const pod = find(files, 'Deployment').doc.spec.template.spec;
      expect(pod.containers[0].lifecycle.preStop.exec.command).toEqual(['sleep', PLACEHOLDER]);
      const graceSeconds = Number(values.config.SHUTDOWN_GRACE_MS) / 1000;
      expect(values.terminationGracePeriodSeconds).toBeGreaterThan(graceSeconds + values.preStopSleepSeconds);
    });

    it('migrates in a pre-install/pre-upgrade Job that reads DATABASE_URL from the Secret', () => {
      const job = find(files, 'Job').doc;
      expect(job.metadata.annotations['helm.sh/hook']).toBe('pre-install,pre-upgrade');
      const container = job.spec.template.spec.containers[0];
      // the same migration lock as booting replicas (test/migrate-cli.e2e-spec.ts)
      expect(container.command).toEqual(['node', 'dist/src/database/migrate-cli.js']);
      expect(container.env[0]).toMatchObject({
        name: 'DATABASE_URL',
        valueFrom: { secretKeyRef: { key: 'DATABASE_URL' } },
      });
      // the Secret exists before the Job: a hook with a lower weight
      const secret = find(files, 'Secret').doc;
      expect(Number(secret.metadata.annotations['helm.sh/hook-weight'])).toBeLessThan(
        Number(job.metadata.annotations['helm.sh/hook-weight']),
      );
    });

    it('exposes the http port through the Service', () => {
      const service = find(files, 'Service').doc;
      expect(service.spec.ports).toEqual([
        { name: 'http', port: PLACEHOLDER, targetPort: 'http', protocol: 'TCP' },
      ]);
    });
  });

  describe('docker-compose.yml', () => {
    const compose = parse(readText(ROOT, 'docker-compose.yml')) as Yaml;

    it('runs the app on PostgreSQL once the database is healthy', () => {
      const { app, postgres } = compose.services;
      expect(postgres.image).toMatch(/^postgres:1[5-9]/);
      expect(postgres.healthcheck.test.join(' ')).toContain('pg_isready');
      expect(app.depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
      const url = new URL(app.environment.DATABASE_URL);
      expect(url.hostname).toBe('postgres');
      expect(url.pathname).toBe(`/${postgres.environment.POSTGRES_DB}`);
      expect(app.ports).toEqual(['3000:3000']);
      // no default key: `docker compose up` stops with this message when SERVICE_API_KEY is not set
      expect(app.environment.SERVICE_API_KEY).toMatch(/^\$\{SERVICE_API_KEY:\?[^}]*read every profile\}$/);
      expect(Number.parseInt(app.stop_grace_period, 10) * 1000).toBeGreaterThan(
        Number(app.environment.SHUTDOWN_GRACE_MS),
      );
      expect(app.read_only).toBe(true);
    });

    it('has an .env.example beside it with every variable it reads, and no other', () => {
      const read = [...readText(ROOT, 'docker-compose.yml').matchAll(/\$\{(\w+)/g)].map((match) => match[1]);
      const example = [...readText(ROOT, '.env.example').matchAll(/^(\w+)=/gm)].map((match) => match[1]);
      expect([...new Set(example)].sort()).toEqual([...new Set(read)].sort());
    });
  });

  describe('Dockerfile', () => {
    const dockerfile = readText(ROOT, 'Dockerfile');

    it('builds in stages and runs the production dependencies as a non-root user with a health check', () => {
      expect(dockerfile.match(/^FROM /gm)).toHaveLength(3);
      expect(dockerfile).toContain('npm ci --omit=dev');
      const runtime = dockerfile.slice(dockerfile.lastIndexOf('FROM '));
      expect(runtime).toMatch(/^USER 1000:1000$/m);
      expect(runtime).toMatch(/^HEALTHCHECK .*\n.*\/health/m);
      expect(runtime).toContain('COPY --from=prod-deps /app/node_modules ./node_modules');
      expect(runtime).toMatch(/^CMD \["node", ("--[^"]+", )*"dist\/src\/main.js"\]$/m);
    });

    it('runs node with the flags of `npm run start:prod` and `npm start`', () => {
      const runtime = dockerfile.slice(dockerfile.lastIndexOf('FROM '));
      const cmd = JSON.parse(/^CMD (\[.*\])$/m.exec(runtime)![1]) as string[];
      const flags = cmd.slice(1, -1);
      expect(flags).toContain('--max-semi-space-size=32');
      const scripts = (JSON.parse(readText(ROOT, 'package.json')) as { scripts: Record<string, string> })
        .scripts;
      expect(scripts['start:prod']).toBe(['node', ...flags, 'dist/src/main.js'].join(' '));
      expect(scripts.start).toContain(` ${['node', ...flags, 'dist/src/main.js'].join(' ')}`);
    });
  });
});
