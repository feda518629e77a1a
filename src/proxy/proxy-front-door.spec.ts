import { Body, Controller, Header, HttpCode, Post, Req, Res, UseGuards, Version } from '@nestjs/common';
import type { Request, Response } from 'express';
import { directRoutes } from './proxy-front-door';
import { ProxyController } from './proxy.controller';

class AlwaysGuard {
  canActivate(): boolean {
    return true;
  }
}

class SampleBody {
  name!: string;
}

@Controller('v9')
class SampleController {
  @Post('plain')
  plain(@Body() _body: unknown, @Req() _req: Request, @Res() _res: Response): void {}

  @Post('ok')
  @HttpCode(200)
  ok(@Body() _body: unknown, @Req() _req: Request, @Res() _res: Response): void {}

  @Post('guarded')
  @UseGuards(AlwaysGuard)
  guarded(@Body() _body: unknown, @Req() _req: Request, @Res() _res: Response): void {}

  @Post('headed')
  @Header('x-extra', '1')
  headed(@Body() _body: unknown, @Req() _req: Request, @Res() _res: Response): void {}

  @Post('versioned')
  @Version('2')
  versioned(@Body() _body: unknown, @Req() _req: Request, @Res() _res: Response): void {}

  @Post('passthrough')
  passthrough(
    @Body() _body: unknown,
    @Req() _req: Request,
    @Res({ passthrough: true }) _res: Response,
  ): string {
    return 'returned';
  }

  @Post('typed')
  typed(@Body() _body: SampleBody, @Req() _req: Request, @Res() _res: Response): void {}

  @Post('no-response')
  noResponse(@Body() _body: unknown, @Req() _req: Request): string {
    return 'returned';
  }
}

@Controller('v8')
@UseGuards(AlwaysGuard)
class GuardedController {
  @Post('any')
  any(@Body() _body: unknown, @Req() _req: Request, @Res() _res: Response): void {}
}

describe('directRoutes: the routes the proxy front door may serve without Nest', () => {
  it('takes POST methods of raw body, request and response, with the status Nest would set', () => {
    const routes = directRoutes(SampleController).map(({ path, statusCode }) => ({ path, statusCode }));
    expect(routes).toEqual([
      { path: '/v9/plain', statusCode: 201 },
      { path: '/v9/ok', statusCode: 200 },
    ]);
  });

  it('leaves every route of a controller with its own guards to Nest', () => {
    expect(directRoutes(GuardedController)).toEqual([]);
  });

  it("serves all four of the proxy's POST routes", () => {
    const routes = directRoutes(ProxyController).map(({ path }) => path);
    expect(routes.sort()).toEqual([
      '/v1/chat/completions',
      '/v1/embeddings',
      '/v1/messages',
      '/v1/responses',
    ]);
  });
});
