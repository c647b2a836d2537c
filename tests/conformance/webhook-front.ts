// A webhook receiver in its own OS process, in front of the wrong app's: an ordinary node:http server that answers 413
// as soon as Content-Length is over its limit, without reading the body, and closes (mode `refuse-unread`); or reads the
// whole body and closes without an answer (`read-then-drop`); and passes every other delivery on to the app. Its own
// process, because the race it makes (the answer against the next write of the upload) does not happen when sender
// and receiver share one event loop. Started by startWebhookFront(); run as a script, it prints its port.
import { spawn } from "node:child_process";
import { createServer, request, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";

export type FrontMode = "refuse-unread" | "read-then-drop" | "forward";
const LIMIT_BYTES = 64 * 1024;

export interface WebhookFront {
  url: string;
  setMode(mode: FrontMode): Promise<void>;
  close(): Promise<void>;
}

/** Starts the front for `target` (the app's webhook URL) in a child process. */
export async function startWebhookFront(target: string): Promise<WebhookFront> {
  const loader = path.resolve("node_modules/tsx/dist/esm/index.mjs");
  const child = spawn(process.execPath, ["--import", loader, fileURLToPath(import.meta.url), target], { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.setEncoding("utf8").once("data", (line: string) => resolve(Number(line.trim())));
    child.once("exit", (code) => reject(new Error(`the webhook front exited (${code})`)));
  });
  const url = `http://127.0.0.1:${port}`;
  return {
    url: `${url}/api/webhooks`,
    async setMode(mode) {
      await fetch(`${url}/_front/mode`, { method: "POST", body: mode });
    },
    async close() {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill();
      await exited;
    },
  };
}

function serve(target: string): void {
  let mode: FrontMode = "refuse-unread";
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.url === "/_front/mode") {
      let body = "";
      req.on("data", (chunk: Buffer) => (body += chunk.toString()));
      req.on("end", () => {
        mode = body as FrontMode;
        res.writeHead(204).end();
      });
      return;
    }
    const oversize = Number(req.headers["content-length"] ?? 0) > LIMIT_BYTES;
    if (oversize && mode === "refuse-unread") {
      res.writeHead(413, { "Content-Type": "text/plain", Connection: "close" }).end("too large");
      return;
    }
    if (oversize && mode === "read-then-drop") {
      req.resume();
      req.on("end", () => req.socket.destroy());
      return;
    }
    const forwarded = request(new URL(req.url ?? "/", target), { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forwarded.on("error", () => res.writeHead(502).end());
    req.pipe(forwarded);
  });
  server.listen(0, "127.0.0.1", () => process.stdout.write(`${(server.address() as AddressInfo).port}\n`));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) serve(process.argv[2]!);
