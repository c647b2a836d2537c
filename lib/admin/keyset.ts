// Keyset pages for the console's logs read newest first (the audit log, the webhook log): a page
// starts after the last row of the one before, given as its time and id, so rows added meanwhile
// never shift a page and a deep page costs what the first does (an index range, no OFFSET).
import "server-only";
import { z } from "zod";

export type KeysetCursor = { at: Date; id: string };

/** `<epoch ms>_<uuid>` → the position after that row; anything else fails (callers `.catch` it). */
export const KeysetCursorSchema = z
  .string()
  .max(100)
  .transform((value, ctx): KeysetCursor => {
    const [time, id] = value.split("_");
    const at = new Date(Number(time));
    if (!time || !/^\d{1,15}$/.test(time) || Number.isNaN(at.getTime()) || !z.uuid().safeParse(id).success) {
      ctx.addIssue({ code: "custom", message: "not a cursor" });
      return z.NEVER;
    }
    return { at, id: id! };
  });

/** The cursor after this row. */
export const cursorAfter = (at: Date, id: string): string => `${at.getTime()}_${id}`;
