// Entry point: `npm start`. Reads the environment once, starts the configured role, and shuts
// down gracefully on SIGTERM/SIGINT.
import { ConfigError, loadConfig } from './config/load.js';
import { createLogger } from './logger.js';
import { startService } from './service.js';

async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`purger: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const logger = createLogger(config.logLevel);
  const configFailure = (err: ConfigError): never => {
    process.stderr.write(`purger: ${err.message}\n`);
    process.exit(2);
  };
  const service = await startService(config, logger, { onFatal: configFailure }).catch((err: unknown) => {
    if (err instanceof ConfigError) return configFailure(err);
    throw err;
  });
  const shutdown = (signal: string): void => {
    logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      logger.error('graceful shutdown timed out; exiting');
      process.exit(1);
    }, config.shutdownTimeoutMs);
    force.unref();
    service.close().then(
      () => {
        logger.info('stopped');
        process.exit(0);
      },
      (err: unknown) => {
        logger.error({ err: String(err) }, 'error during shutdown');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  process.stderr.write(`purger: failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
