import { INestApplication, LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import cors from 'cors';
import type { RequestHandler } from 'express';
import { AppModule } from './app.module';
import { APP_TITLE, APP_VERSION } from './app-info';
import { jsonBodyParser } from './common/body-parsing';
import { JsonParseThread } from './common/json-parse-thread';
import { corsOptions } from './common/cors-options';
import { ExpressHttpAdapter } from './common/http-adapter';
import { applyHttpServerLimits } from './common/http-server-limits';
import { securityHeaders } from './common/security-headers';
import { AppConfig, loadConfig } from './config/app-config';
import { serveConsole } from './console/console-assets';
import { APP_CONFIG } from './config/config.module';
import { AppLogger, PinoLoggerService } from './logging/app-logger';
import { createRootLogger, HttpLogger } from './logging/http-logger';
import { httpMetricsMiddleware } from './metrics/http-metrics.middleware';
import { MetricsService } from './metrics/metrics.service';
import { ProxyFrontDoor } from './proxy/proxy-front-door';

/**
 * Builds the application exactly as production runs it; main.ts and the end-to-end tests both use it.
 * Until configureApp installs the application's logger, Nest logs through `logger` (by default one
 * made from the configuration), so that lines written while the database is created appear as it
 * happens. An error that stops start-up is thrown to the caller.
 */
export async function createApp(
  logger: LoggerService = createStartupLogger(loadConfig(process.env)),
): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule, new ExpressHttpAdapter(), {
    bodyParser: false,
    logger,
    abortOnError: false,
  });
  configureApp(app);
  await app.init();
  return app;
}

/** The logger of the start-up, before the application's own exists: configured as that one will be. */
export function createStartupLogger(config: AppConfig): LoggerService {
  return new AppLogger(new PinoLoggerService(createRootLogger(config, { sync: true })));
}

/**
 * The HTTP server's limits, the HTTP edge (edgeMiddleware), the proxy's front door and the API docs. SIGTERM is handled by
 * GracefulShutdown (main.ts), not by Nest's shutdown hooks.
 */
export function configureApp(app: NestExpressApplication): void {
  const config = app.get<AppConfig>(APP_CONFIG);
  app.useLogger(new AppLogger(new PinoLoggerService(app.get(HttpLogger).root)));
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  app.set('trust proxy', config.trustProxy);
  applyHttpServerLimits(app.getHttpServer(), config.http);
  const edge = edgeMiddleware(app, config);
  for (const handler of edge) app.use(handler);
  app.get(ProxyFrontDoor).open(app, edge);
  serveConsole(app);
  SwaggerModule.setup('docs', app, () => buildOpenApiDocument(app), {
    jsonDocumentUrl: 'docs-json',
    customSiteTitle: 'Profile Memory Service API',
  });
}

/**
 * The HTTP edge, in order: request id and request log line, metrics, security headers, CORS, body
 * parsing. The first two come before everything that can refuse a request, so every request is logged
 * and counted. Express runs it for every route; the proxy's front door runs the same list.
 */
function edgeMiddleware(app: NestExpressApplication, config: AppConfig): RequestHandler[] {
  return [
    app.get(HttpLogger).middleware as RequestHandler,
    httpMetricsMiddleware(app.get(MetricsService)),
    securityHeaders(),
    ...(config.corsOrigins.length > 0 ? [cors(corsOptions(config.corsOrigins))] : []),
    ...jsonBodyParser(config.bodyLimitBytes, app.get(JsonParseThread)),
  ];
}

/** The API document's tags, in the order the docs show them. */
const TAGS: [name: string, description: string][] = [
  [
    'proxy',
    'The LLM APIs clients speak (OpenAI chat completions and Responses, Anthropic Messages, embeddings): ' +
      'the profile of the user (X-Service-Id) is injected, the request relayed to the configured upstream, ' +
      'and the conversation learnt from in the background.',
  ],
  ['profiles', 'One profile per user of your application: get or create, list, summary, export, erase.'],
  ['traits', 'Structured facts about a user (name, language, ...), checked against the trait schemas.'],
  ['memories', 'Free-text memories of a user, ranked by relevance, importance and recency.'],
  [
    'context',
    'What the proxy would inject for a question, with the scored memories: for apps and agents that call their LLM themselves.',
  ],
  ['ingest', 'Learn traits and memories from any text, synchronously.'],
  [
    'access',
    'Applications (each owns its profiles), their API keys with scopes (proxy, read, write, admin), and the ' +
      'audit trail. Every operation says the scope it needs in `x-required-scope`.',
  ],
  [
    'mcp',
    'The memory as Model Context Protocol tools for agents (Streamable HTTP, stateless): search_memories, ' +
      'remember, forget, get_profile, set_trait, for the user of X-Service-Id.',
  ],
  ['extraction', 'Background learning of a profile: what is pending, failed and given up; try again.'],
  ['health', 'Liveness and readiness probes; never need the key.'],
  ['operations', 'Prometheus metrics.'],
];

export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setTitle(APP_TITLE)
    .setDescription(
      'A memory layer for LLM applications: an OpenAI-compatible proxy that injects what it knows about ' +
        'the user, and a management API for profiles, traits and memories. Errors use the envelope ' +
        '`{ "error": { "message", "type", "code", "param"? } }`.',
    )
    .setVersion(APP_VERSION)
    // A plain shared key (SERVICE_API_KEY), not a JWT: addBearerAuth would label it one.
    .addSecurity('bearer', {
      type: 'http',
      scheme: 'bearer',
      description: 'SERVICE_API_KEY, when the service has one',
    });
  for (const [name, description] of TAGS) builder.addTag(name, description);
  return SwaggerModule.createDocument(app, builder.build(), {
    operationIdFactory: (_controllerKey, methodKey) => methodKey,
  });
}
