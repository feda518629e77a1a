import { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import helmet from 'helmet';
import { Logger } from 'nestjs-pino';
import { AppModule } from './app.module';
import { jsonBodyParser } from './common/body-parsing';
import { corsOptions } from './common/cors-options';
import { AppConfig } from './config/app-config';
import { APP_CONFIG } from './config/config.module';
import { HttpLogger } from './logging/http-logger';
import { httpMetricsMiddleware } from './metrics/http-metrics.middleware';
import { MetricsService } from './metrics/metrics.service';

/** Builds the application exactly as production runs it; main.ts and the end-to-end tests both use it. */
export async function createApp(): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule, {
    bodyParser: false,
    bufferLogs: true, // boot lines wait for the pino logger below
  });
  configureApp(app);
  await app.init();
  return app;
}

/**
 * The HTTP edge, in order: request id and request log line, metrics, security headers, CORS, body
 * parsing. The first two come before everything that can refuse a request, so every request is logged
 * and counted. SIGTERM is handled by GracefulShutdown (main.ts), not by Nest's shutdown hooks.
 */
export function configureApp(app: NestExpressApplication): void {
  const config = app.get<AppConfig>(APP_CONFIG);
  app.useLogger(app.get(Logger));
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  app.set('trust proxy', config.trustProxy);
  app.use(app.get(HttpLogger).middleware);
  app.use(httpMetricsMiddleware(app.get(MetricsService)));
  app.use(helmet());
  if (config.corsOrigins.length > 0) app.enableCors(corsOptions(config.corsOrigins));
  app.use(jsonBodyParser(config.bodyLimitBytes));
  SwaggerModule.setup('docs', app, () => buildOpenApiDocument(app), {
    jsonDocumentUrl: 'docs-json',
    customSiteTitle: 'Profile Memory Service API',
  });
}

export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const options = new DocumentBuilder()
    .setTitle('Profile Memory Service')
    .setDescription(
      'A memory layer for LLM applications: an OpenAI-compatible proxy that injects what it knows about ' +
        'the user, and a management API for profiles, traits and memories. Errors use the envelope ' +
        '`{ "error": { "message", "type", "code", "param"? } }`.',
    )
    .setVersion('1')
    .addBearerAuth({
      type: 'http',
      scheme: 'bearer',
      description: 'SERVICE_API_KEY, when the service has one',
    })
    .build();
  return SwaggerModule.createDocument(app, options, {
    operationIdFactory: (_controllerKey, methodKey) => methodKey,
  });
}
