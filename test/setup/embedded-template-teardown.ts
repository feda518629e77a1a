import { rmSync } from 'node:fs';
import { TEMPLATE_ENV } from './embedded-template';

export default function removeEmbeddedTemplate(): void {
  const file = process.env[TEMPLATE_ENV];
  if (file) rmSync(file, { force: true });
}
