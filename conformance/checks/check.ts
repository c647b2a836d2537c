import type { RunContext } from "../context";
import type { Outcome } from "../types";

export interface Check {
  id: string;
  group: string;
  obligation: string;
  section: string;
  run(ctx: RunContext): Promise<Outcome>;
}
