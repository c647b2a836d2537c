// The container image's runtime stage, without a container runtime: scripts/assemble-runtime.sh lays
// out the files exactly as the Dockerfile copies them, and the server started from that folder alone
// serves pages with their static files, and is ready (it finds the migrations it compares).
import { spawn, execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freePort } from "../helpers/callback";

const out = mkdtempSync(path.join(tmpdir(), "runtime-image-"));
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe("the runtime image's layout", () => {
  it("serves pages, their static files and a ready /api/ready from the assembled folder alone", async () => {
    const distDir = process.env.NEXT_DIST_DIR || ".next";
    execFileSync("sh", ["scripts/assemble-runtime.sh", distDir, out], { stdio: "pipe" });
    expect(existsSync(path.join(out, ".env"))).toBe(false); // a local .env never travels into an image

    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const child = spawn(process.execPath, ["server.js"], {
      cwd: out,
      env: { ...process.env, NODE_ENV: "production", PORT: String(port), HOSTNAME: "127.0.0.1", __NEXT_PROCESSED_ENV: "true" },
      stdio: "ignore",
    });
    try {
      let ready: Response | undefined;
      for (let i = 0; i < 100 && !ready?.ok; i++) {
        ready = await fetch(`${base}/api/ready`).catch(() => undefined);
        if (!ready?.ok) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(ready?.status).toBe(200);
      expect(await ready!.json()).toMatchObject({ status: "ready", checks: { database: "ok", migrations: "ok" } });

      const html = await (await fetch(`${base}/`)).text();
      const asset = /(?:href|src)="(\/_next\/static\/[^"]+)"/.exec(html)?.[1];
      expect(asset).toBeDefined();
      expect((await fetch(`${base}${asset}`)).status).toBe(200);
    } finally {
      child.kill("SIGTERM");
    }
  });
});
