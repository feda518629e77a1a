import { Controller, Get, Redirect } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Public } from '../common/public.decorator';
import { NoRateLimit } from '../common/rate-limit.decorator';

/** Where a browser opened on the service's address lands. */
export const HOME_PAGE = '/admin/';

@ApiExcludeController()
@Public()
@NoRateLimit()
@Controller()
export class HomeController {
  /** The root of the service redirects to the console (which links nothing it has not checked with the API). */
  @Get()
  @Redirect(HOME_PAGE, 302)
  home(): void {}
}
