// The servers `npm run dev` and `npm test` start (scripts/lib/stack.ts, sandbox/config.ts listenHost) listen on
// loopback only: the app, the sandbox (whose control API has no authentication) and the embedded PostgreSQL are
// reachable through `localhost`, and not at any of this machine's other addresses.
import net from "node:net";
import { networkInterfaces } from "node:os";
import { describe, expect, it } from "vitest";
import { stack } from "../helpers/stack";

function connect(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port, timeout: 2_000 });
    socket.on("connect", () => (socket.destroy(), resolve("connected")));
    socket.on("timeout", () => (socket.destroy(), resolve("timeout")));
    socket.on("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? "error"));
  });
}

/** This machine's addresses other than loopback (link-local IPv6 left out: it needs a zone to connect to). */
function otherAddresses(): string[] {
  return Object.values(networkInterfaces())
    .flat()
    .filter((address) => address !== undefined && !address.internal && !address.address.startsWith("fe80:"))
    .map((address) => address!.address);
}

describe("development and test servers listen on loopback only", () => {
  const servers = [
    { name: "the app", url: stack.appUrl },
    { name: "the sandbox", url: stack.sandboxUrl },
    { name: "PostgreSQL", url: stack.databaseUrl },
  ].filter(({ url }) => ["localhost", "127.0.0.1", "[::1]"].includes(new URL(url).hostname)); // TEST_DATABASE_URL may be elsewhere

  it("each is reachable at localhost and at none of the machine's other addresses", async () => {
    // Without another address there is nothing to check against; every machine that runs this has one.
    expect(otherAddresses().length).toBeGreaterThan(0);
    for (const { name, url } of servers) {
      const port = Number(new URL(url).port);
      expect(await connect("localhost", port), `${name} via localhost`).toBe("connected");
      for (const address of otherAddresses()) expect(await connect(address, port), `${name} at ${address}:${port}`).not.toBe("connected");
    }
  });
});
