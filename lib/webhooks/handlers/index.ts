// The webhook events the app acts on: the one list (contract §6 names three). The receiver
// (../receive.ts) finds a delivery's handler here and nowhere else, for the full transaction and the
// one-statement path alike. A type that is not listed is acknowledged with a 2xx and recorded as
// "ignored", for the audit trail (docs/spec-gaps.md A111).
//
// Adding an event: one file in this folder, named after the event, exporting one
// `defineWebhookHandler({ type, handle, fastPath? })` (../handler.ts), and one line below. Removing
// one is the reverse. tests/unit/webhook-handlers.test.ts checks the list.
import "server-only";
import type { WebhookHandler } from "../handler";
import { installConfigUpdated } from "./install-config-updated";
import { installCreated } from "./install-created";
import { installRevoked } from "./install-revoked";

export const WEBHOOK_HANDLERS: readonly WebhookHandler[] = [
  installCreated,
  installRevoked,
  installConfigUpdated,
];

// A Map, not an object literal: an event type is text from the network, and "toString" or
// "__proto__" must find nothing rather than something every object inherits.
const BY_TYPE: ReadonlyMap<string, WebhookHandler> = new Map(WEBHOOK_HANDLERS.map((handler) => [handler.type, handler]));

/** The handler for an event type, or undefined for a type the app does not act on (recorded as ignored). */
export function webhookHandlerFor(type: string): WebhookHandler | undefined {
  return BY_TYPE.get(type);
}
