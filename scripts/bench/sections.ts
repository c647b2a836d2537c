// The bench's sections, in the order `npm run bench` runs them. Adding a section is one file in this
// folder exporting its function, and one entry here (and a row in the README's bench table).
import { budget } from "./budget";
import { staffConsole } from "./console";
import { dataPages } from "./data-pages";
import { idleMemory } from "./idle-memory";
import { webhookBurst, webhookIngest } from "./ingest";
import { keepalive } from "./keepalive";
import type { Section } from "./lib";
import { overview } from "./overview";
import { primitives } from "./primitives";
import { scaleOut } from "./scale-out";
import { signIn } from "./sign-in";
import { stampede } from "./stampede";
import { storage } from "./storage";
import { storm } from "./storm";
import { sync } from "./sync";

export const SECTIONS: readonly Section[] = [
  { name: "primitives", inProcess: true, run: primitives },
  // Before any request: what the idle server holds.
  { name: "idle-memory", beforeTraffic: true, run: idleMemory },
  { name: "stampede", run: stampede },
  { name: "storm", run: storm },
  { name: "budget", run: budget },
  { name: "sync", run: sync },
  { name: "data-pages", run: dataPages },
  { name: "overview", run: overview },
  { name: "ingest", run: webhookIngest },
  { name: "burst", run: webhookBurst },
  // Before console: it locks the staff account, then lifts the lock for the console to sign in.
  { name: "sign-in", run: signIn },
  { name: "console", run: staffConsole },
  { name: "keepalive", run: keepalive },
  // After the others: it starts two more app processes and two workers beside the stack.
  { name: "scale-out", run: scaleOut },
  // Last: it fills the history tables with a month of rows, then empties them.
  { name: "storage", run: storage },
];
