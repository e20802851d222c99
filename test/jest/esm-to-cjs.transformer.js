/**
 * Jest runs CommonJS, while NestJS 12 ships ES modules only. Node 20 can require() them
 * (require(esm)) but Jest's module system cannot, so this transformer turns those packages
 * into CommonJS with SWC. `import.meta.url` has no CommonJS twin that SWC emits, so it is
 * rewritten to the file URL of the module first.
 */
const { createTransformer } = require('@swc/jest');

const swc = createTransformer({
  jsc: { parser: { syntax: 'ecmascript' }, target: 'es2022' },
  module: { type: 'commonjs', ignoreDynamic: false },
});

module.exports = {
  process(source, path, options) {
    const rewritten = source.replace(
      /\bimport\.meta\.url\b/g,
      "require('node:url').pathToFileURL(__filename).href",
    );
    return swc.process(rewritten, path, options);
  },
  getCacheKey(source, path, options) {
    return `esm-to-cjs:${swc.getCacheKey(source, path, options)}`;
  },
};
