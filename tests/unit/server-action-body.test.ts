// lib/http/server-action-body.ts: which server-action bodies Next.js would fail to decode (a 500).
import { describe, expect, it } from "vitest";
import { formOf, serverActionBodyFault } from "@/lib/http/server-action-body";

const form = (fields: Record<string, string>) => {
  const data = new FormData();
  for (const [name, value] of Object.entries(fields)) data.append(name, value);
  return data;
};

describe("serverActionBodyFault", () => {
  it("lets through what React's encodeReply writes for this app's calls", () => {
    expect(serverActionBodyFault("[]", true)).toBeNull();
    expect(serverActionBodyFault('["$K1"]', true)).toBeNull();
    expect(serverActionBodyFault('[null,"$$literal",{"at":"$D2026-01-01T00:00:00.000Z"},"$undefined","$n12","$NaN"]', true)).toBeNull();
    expect(serverActionBodyFault(form({ 0: '[null,"$K1"]', "1_name": "x" }), true)).toBeNull();
    expect(serverActionBodyFault(form({ 0: '["$Q1","$W2","$@3","$4:a"]', 1: "[[1,2]]", 2: "[1]", 3: '"x"', 4: '{"a":1}' }), true)).toBeNull();
    // A form before hydration: an action id, or a bound action with its bound arguments.
    expect(serverActionBodyFault(form({ $ACTION_ID_abc: "", choice: "stay" }), false)).toBeNull();
    expect(serverActionBodyFault(form({ $ACTION_REF_1: "", "$ACTION_1:0": '{"id":"abc","bound":"$@1"}', "$ACTION_1:1": "[null]" }), false)).toBeNull();
    expect(serverActionBodyFault(form({ $ACTION_REF_1: "", "$ACTION_1:0": '{"id":"abc","bound":null}' }), false)).toBeNull();
    // Not a server action at all: Next.js renders the page.
    expect(serverActionBodyFault("anything", false)).toBeNull();
  });

  it("names what Next.js would fail on", () => {
    expect(serverActionBodyFault("", true)).toBe("part 0 is not JSON");
    expect(serverActionBodyFault('{"a":1}', true)).toBe("the argument list is not a list");
    expect(serverActionBodyFault('"$@1"', true)).toBe("part 1 is missing");
    expect(serverActionBodyFault('["$h1"]', true)).toBe('unsupported reference "$h1"');
    expect(serverActionBodyFault('["$T"]', true)).toBe('unsupported reference "$T"');
    expect(serverActionBodyFault(`["$n${"1".repeat(301)}"]`, true)).toMatch(/^unsupported reference/);
    expect(serverActionBodyFault(`${"[".repeat(100)}${"]".repeat(100)}`, true)).toBe("nested too deep");
    expect(serverActionBodyFault(JSON.stringify(Array(1001).fill(0)), true)).toBe("too many arguments");
    expect(serverActionBodyFault(form({ "1_name": "x" }), true)).toBe("part 0 is missing");
    expect(serverActionBodyFault(form({ 0: '["$Q1"]', 1: "{}" }), true)).toBe("a Map that is not a list of pairs");
    expect(serverActionBodyFault(form({ 0: '["$1:b"]', 1: '{"a":1}' }), true)).toBe('reference "$1:b" leads nowhere');
    // A chain of parts is as deep as the nesting it stands for.
    const chain = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [String(i), `["$${(i + 1).toString(16)}"]`]));
    expect(serverActionBodyFault(form(chain), true)).toBe("nested too deep");
    expect(serverActionBodyFault(form({ $ACTION_REF_1: "", "$ACTION_1:0": '{"id":"abc","bound":"$@1"}' }), false)).toBe("$ACTION_REF_1: part 1 is missing");
    expect(serverActionBodyFault(form({ $ACTION_REF_1: "", "$ACTION_1:0": '{"bound":null}' }), false)).toBe("$ACTION_REF_1: the bound action has no id");
    expect(serverActionBodyFault(form({ $ACTION_REF_1: "", "$ACTION_1:0": '{"id":"abc","bound":"$@1"}', "$ACTION_1:1": "{}" }), false)).toBe("$ACTION_REF_1: the bound arguments are not a list");
  });
});

describe("formOf", () => {
  it("gives the form an action was given, or an empty one for anything else", () => {
    const data = form({ a: "1" });
    expect(formOf(data)).toBe(data);
    for (const other of [undefined, null, "x", 1, { get: () => "forged" }]) expect([...formOf(other).keys()]).toEqual([]);
  });
});
