// Helpers the end-to-end specs share: the stack's settings, the sandbox's operators, and a staff
// sign-in through the console's form, as a person does it.
import { expect, type Page } from "@playwright/test";
import { control, stack } from "./stack";

/** A setting of the stack `npm test` starts (scripts/test.ts passes them in the environment). */
export function requiredEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the end-to-end tests through \`npm test\``);
  return value;
}

export type Operator = { id: number; name: string; chargePointCount: number };

/** The sandbox's seeded operators, in the portal's order. */
export async function operators(): Promise<Operator[]> {
  return (await control<{ operators: Operator[] }>("GET", "/operators")).operators;
}

/** Signs in to the staff console with the local account `npm run dev` and `npm test` create. */
export async function signInAsStaff(page: Page): Promise<void> {
  await page.goto("/admin/sign-in");
  await page.getByLabel("Email").fill(requiredEnv("STAFF_DEV_EMAIL"));
  await page.getByLabel("Password").fill(requiredEnv("STAFF_DEV_PASSWORD"));
  await page.getByRole("button", { name: "Sign in" }).click();
  // next-auth's signIn() runs in the page (fetch, then router.replace): without its scripts the form
  // would be submitted natively, as a GET to the sign-in page with the password in the address.
  await expect(page).toHaveURL(`${stack.appUrl}/admin`);
  await expect(page.getByTestId("staff-email")).toHaveText(requiredEnv("STAFF_DEV_EMAIL"));
}

/** The operator's side of an install, as a person clicks it: portal → the operator → Connect → Approve. */
export async function approveInPortal(page: Page, operator: Operator): Promise<void> {
  await page.goto(`${stack.sandboxUrl}/portal`);
  await page.getByRole("link", { name: operator.name }).click();
  await page.getByRole("button", { name: "Connect" }).click();
  await page.getByRole("button", { name: "Approve" }).click();
}

/** A complete install for the first operator, landing on the app's dashboard, connected. */
export async function installAsFirstOperator(page: Page): Promise<void> {
  const [operator] = await operators();
  await approveInPortal(page, operator!);
  await expect(page).toHaveURL(`${stack.appUrl}/dashboard`);
  await expect(page.getByTestId("install-status")).toHaveText("Connected");
}
