// ts-jest needs a named, versioned AST transformer; the Swagger CLI plugin exports only `before`.
const plugin = require('@nestjs/swagger/plugin');

module.exports.name = 'nestjs-swagger-transformer';
module.exports.version = 1; // bump when the options change: ts-jest caches by it
module.exports.factory = (compilerHost) =>
  plugin.before({ classValidatorShim: true, introspectComments: true }, compilerHost.program);
