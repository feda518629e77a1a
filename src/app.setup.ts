import { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { AppModule } from './app.module';
import { jsonBodyParser } from './common/body-parsing';
import { AppConfig } from './config/app-config';
import { APP_CONFIG } from './config/config.module';

/** Builds the application exactly as production runs it; main.ts and the end-to-end tests both use it. */
export async function createApp(): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule, {
    bodyParser: false,
    logger: loggerLevels(process.env.LOG_LEVEL),
  });
  configureApp(app);
  await app.init();
  return app;
}

export function configureApp(app: NestExpressApplication): void {
  const config = app.get<AppConfig>(APP_CONFIG);
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  app.use(jsonBodyParser(config.bodyLimitBytes));
  app.enableShutdownHooks();
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

type NestLogLevel = 'fatal' | 'error' | 'warn' | 'log' | 'debug' | 'verbose';

function loggerLevels(level: string | undefined): NestLogLevel[] | false {
  const order: NestLogLevel[] = ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'];
  const index: Record<string, number> = { fatal: 0, error: 1, warn: 2, info: 3, debug: 4, trace: 5 };
  if (level === 'silent') return false;
  return order.slice(0, (index[level ?? 'info'] ?? 3) + 1);
}
