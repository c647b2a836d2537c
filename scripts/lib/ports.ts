// Before `npm run dev` starts anything: are its ports free? Otherwise it would print "Ready" and link
// to whatever else is listening there (another checkout's app, an old sandbox).
import net from "node:net";

export type NamedPort = { port: number; variable: string; what: string };

/** Whether something already listens on `port` on this machine's loopback (IPv4 or IPv6). */
export async function isPortTaken(port: number): Promise<boolean> {
  for (const host of ["127.0.0.1", "::1"]) {
    const taken = await new Promise<boolean>((resolve) => {
      const server = net.createServer();
      server.once("error", (error: NodeJS.ErrnoException) => resolve(error.code === "EADDRINUSE" || error.code === "EACCES"));
      server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(false)));
    });
    if (taken) return true;
  }
  return false;
}

/** Throws one message naming every taken port, the variable that moves it, and how. */
export async function assertPortsFree(ports: NamedPort[]): Promise<void> {
  const taken: NamedPort[] = [];
  for (const entry of ports) if (await isPortTaken(entry.port)) taken.push(entry);
  if (taken.length === 0) return;
  throw new Error(
    [
      ...taken.map((t) => `port ${t.port} (${t.what}) is already in use by another program.`),
      `Stop that program, or choose other ports: e.g. ${taken.map((t) => `${t.variable}=${t.port + 1}`).join(" ")} npm run dev`,
      "(or set them in .env; the addresses that follow from them are rewritten for you).",
    ].join("\n"),
  );
}
