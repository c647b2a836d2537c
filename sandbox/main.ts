// Entry point: `npm run sandbox` (tsx sandbox/main.ts). Reads the same environment as the app,
// loads persisted state, listens, and flushes state on SIGTERM/SIGINT.
import { ConfigError, loadConfig } from "./config.js";
import { startSandbox } from "./server.js";

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }

  const running = await startSandbox(config);
  console.log(`[sandbox] Volt sandbox listening on ${running.url} (portal ${running.url}/portal, issuer ${running.url}/idp, API ${running.url}/api/v1)`);

  let stopping = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    console.log(`[sandbox] ${signal}: saving state and closing`);
    running.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error("[sandbox] error while closing:", error);
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

void main();
