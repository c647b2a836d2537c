// What every check is given: the sandbox, the app's page, operators to install with, and the installs it made (which
// the runner uninstalls after the check, so that the next check finds its operator free).
import { Operator, type PageAnswer } from "./operator";
import { SandboxClient, sleep } from "./sandbox";
import type { ConformanceTarget } from "./types";

/** How long the run waits for one run of the app's scheduled work. */
const TRIGGER_TIMEOUT_MS = 60_000;

export interface Installed {
  installId: number;
  operator: Operator;
  /** The redirect_uri the browser was sent to, with its code (kept for the reused-callback check). */
  callback: URL;
  /** The app's answer to it. */
  answer: PageAnswer;
}

export class RunContext {
  readonly sandbox: SandboxClient;
  /** The run's first event: whole-run checks look at everything after it. */
  startSeq = 0;
  /** Every page of the app the run's operators loaded (contract §1.3: none may carry an authorization URL). */
  readonly pages: { url: string; html: string }[] = [];
  private pool: number[] = [];
  private readonly made: Installed[] = [];

  constructor(readonly target: ConformanceTarget) {
    this.sandbox = new SandboxClient(target.sandboxUrl.replace(/\/$/, ""));
  }

  async start(): Promise<void> {
    this.startSeq = await this.sandbox.mark();
    await this.refreshPool();
  }

  private async refreshPool(): Promise<void> {
    const active = new Set((await this.sandbox.installs()).filter((i) => i.status === "active").map((i) => i.operator_id));
    // The smallest operators first (their sync is quick), never a bulk one (ids from 100,000: sandbox decision 41).
    const listed =
      this.target.operatorIds ??
      (await this.sandbox.operators())
        .filter((o) => o.id < 100_000)
        .sort((a, b) => a.chargePointCount + a.chargeCount - (b.chargePointCount + b.chargeCount) || b.id - a.id)
        .map((o) => o.id);
    this.pool = listed.filter((id) => !active.has(id));
  }

  /** An operator with no active install of the app. */
  async freeOperator(): Promise<Operator> {
    if (this.pool.length === 0) await this.refreshPool();
    const operatorId = this.pool.shift();
    if (operatorId === undefined) throw new Error("no operator without an active install is left at the sandbox (start it with more: SANDBOX_OPERATORS)");
    return new Operator(operatorId, this.sandbox, this.pages);
  }

  /** A complete install: consent in the portal, then the app's redirect_uri, as the operator's browser does it. */
  async install(operator?: Operator): Promise<Installed> {
    const who = operator ?? (await this.freeOperator());
    const callback = await who.consent("approve");
    const answer = await who.request(callback.toString());
    if (answer.location) await who.load(answer.location);
    const install = (await this.sandbox.installs()).find((i) => i.operator_id === who.operatorId && i.status === "active");
    if (!install) throw new Error(`operator ${who.operatorId} approved, but the sandbox shows no active install`);
    const installed = { installId: install.install_id, operator: who, callback, answer };
    this.made.push(installed);
    return installed;
  }

  /** An install a check made by hand (to time its steps): uninstalled after the check like the others. */
  adopt(installed: Installed): void {
    this.made.push(installed);
  }

  /** The app's page that makes an API call, loaded as the operator. */
  page(operator: Operator): Promise<PageAnswer & { url: string }> {
    return operator.load(this.target.pageUrl);
  }

  /** Fires the app's scheduled work the run was given (a cron route), and waits for its answer. */
  async trigger(which: "keepAlive" | "jobs"): Promise<string[]> {
    const triggers = which === "keepAlive" ? (this.target.keepAlive ? [this.target.keepAlive] : []) : (this.target.jobs ?? []);
    const answers: string[] = [];
    for (const trigger of triggers) {
      const where = new URL(trigger.url).pathname;
      try {
        const response = await fetch(trigger.url, {
          method: "POST",
          headers: trigger.secret ? { Authorization: `Bearer ${trigger.secret}` } : {},
          // A run that waits on the app's scheduled work would take tens of minutes; what the work did by then is judged.
          signal: AbortSignal.timeout(TRIGGER_TIMEOUT_MS),
        });
        await response.body?.cancel();
        answers.push(`${where} ${response.status}`);
      } catch (error) {
        answers.push(`${where} ${error instanceof Error && error.name === "TimeoutError" ? `no answer within ${TRIGGER_TIMEOUT_MS / 1000} s` : "unreachable"}`);
      }
    }
    return answers;
  }

  /** Uninstalls what the check installed and the service still holds, so its operator is free again. */
  async cleanUp(): Promise<void> {
    const active = new Set((await this.sandbox.installs()).filter((i) => i.status === "active").map((i) => i.install_id));
    for (const installed of this.made.splice(0)) {
      if (active.has(installed.installId)) await this.sandbox.revoke(installed.installId);
      this.pool.push(installed.operator.operatorId);
    }
    this.pool = [...new Set(this.pool)];
    await sleep(50);
  }
}
