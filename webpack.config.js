// Nest CLI webpack config for the apps: NestJS 12 ships ES modules only, which Node 20 loads
// through require(esm) at a high price in memory and start-up time (about 40 MB and several
// hundred ms for @nestjs/core alone). Bundling the @nestjs packages into main.js turns them
// into plain functions compiled lazily; every other package stays an external require.
const nodeExternals = require('webpack-node-externals');
const path = require('node:path');
const webpack = require('webpack');
const TerserPlugin = require('terser-webpack-plugin');

/** Packages Nest loads only when an application uses them; this gateway never does. */
const LAZY_NEST_IMPORTS = [
  '@nestjs/microservices',
  '@nestjs/microservices/microservices-module',
  '@nestjs/microservices/microservices-module.js',
  '@nestjs/websockets',
  '@nestjs/websockets/socket-module',
  '@nestjs/websockets/socket-module.js',
  '@nestjs/platform-express',
  '@fastify/static',
  '@fastify/view',
  '@fastify/multipart',
  'class-transformer/storage',
  'cache-manager',
  '@nestjs/typeorm',
  '@nestjs/sequelize',
  '@nestjs/mongoose',
  '@mikro-orm/core',
  '@nestjs/axios',
  '@grpc/grpc-js',
  '@grpc/proto-loader',
  'kafkajs',
  'mqtt',
  'nats',
  'ioredis/built/utils',
  'amqplib',
  'amqp-connection-manager',
];

/**
 * The gateway also builds the manifest validation worker beside main.js
 * (dist/apps/gateway/manifest-worker.js), loaded by libs/registry's WorkerValidator.
 */
function entriesOf(options) {
  if (
    typeof options.entry !== 'string' ||
    !options.entry.includes(`${path.sep}gateway${path.sep}`)
  ) {
    return { entry: options.entry, output: options.output };
  }
  return {
    entry: {
      main: options.entry,
      'manifest-worker': path.resolve(__dirname, 'libs/registry/src/manifest/manifest-worker.ts'),
    },
    // the default filename carries the app's folder (e.g. apps/gateway/main.js): keep it
    output: {
      ...options.output,
      filename: path.posix.join(path.posix.dirname(options.output.filename), '[name].js'),
    },
  };
}

module.exports = (options) => ({
  ...options,
  ...entriesOf(options),
  externals: [nodeExternals({ allowlist: [/^@nestjs\//] })],
  // V8 keeps a script's whole source in the heap: comments and indentation (ours are long
  // docstrings, Nest's too) cost about 2 MB of an idle gateway's ~40 MB heap. Terser only drops
  // them: no compression, no renaming, so stack traces keep every function and class name.
  optimization: {
    ...options.optimization,
    minimize: true,
    minimizer: [
      new TerserPlugin({
        extractComments: false,
        terserOptions: {
          compress: false,
          mangle: false,
          // one-byte source: a single non-Latin-1 character makes V8 store the whole script as two bytes per character
          format: { comments: false, ascii_only: true },
        },
      }),
    ],
  },
  plugins: [
    // Type checking is `npm run typecheck` (CI runs it); the build only transpiles, which
    // halves its time (npm start builds on every start).
    ...options.plugins.filter((plugin) => plugin.constructor.name !== 'ForkTsCheckerWebpackPlugin'),
    // A bundled ES module may read import.meta.dirname (terminus' gRPC health check does);
    // in the CommonJS bundle that is __dirname, and its presence would make Node take the
    // whole file for an ES module.
    new webpack.DefinePlugin({ 'import.meta.dirname': '__dirname' }),
    new webpack.IgnorePlugin({
      checkResource(resource) {
        if (!LAZY_NEST_IMPORTS.includes(resource)) return false;
        try {
          require.resolve(resource);
          return false;
        } catch {
          return true;
        }
      },
    }),
  ],
});
