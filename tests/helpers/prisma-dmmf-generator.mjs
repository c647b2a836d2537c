// A Prisma generator that only hands over what Prisma parsed: `prisma generate` sends every
// generator the schema's DMMF (its models, fields, native types, indexes, relations and enums, as
// Prisma itself reads them), and this one writes it to the file PRISMA_DMMF_OUTPUT names.
// tests/helpers/prisma-dmmf.ts runs it; it needs no dependency beyond the prisma CLI.
//
// The protocol is Prisma's generator protocol: JSON-RPC requests, one per line, on stdin
// (`getManifest`, then `generate`), and the answers, one per line, on stderr.
import { writeFileSync } from "node:fs";
import { createInterface } from "node:readline";

const answer = (id, result) => process.stderr.write(`${JSON.stringify({ jsonrpc: "2.0", id, result })}\n`);
const fail = (id, message) =>
  process.stderr.write(`${JSON.stringify({ jsonrpc: "2.0", id, error: { code: -32000, message, data: null } })}\n`);

createInterface({ input: process.stdin, crlfDelay: Infinity }).on("line", (line) => {
  const request = JSON.parse(line);
  if (request.method === "getManifest") {
    answer(request.id, { manifest: { prettyName: "DMMF for the schema drift test", defaultOutput: ".", requiresEngines: [] } });
  } else if (request.method === "generate") {
    const output = process.env.PRISMA_DMMF_OUTPUT;
    if (!output) return fail(request.id, "PRISMA_DMMF_OUTPUT is not set");
    try {
      writeFileSync(output, JSON.stringify({ datamodel: request.params.dmmf.datamodel }));
    } catch (error) {
      return fail(request.id, `could not write ${output}: ${error.message}`);
    }
    answer(request.id, null);
  } else if (request.id !== undefined) {
    // Answer whatever a later Prisma asks too, or `prisma generate` would wait for us forever.
    fail(request.id, `unknown method ${request.method}`);
  }
});
