// The charge point states' colours (app/dashboard/_components/charge-point-state.tsx): the Overview's
// "Charge points by state" draws one bar per state and a legend dot in the bar's colour, so no two
// states may share a colour, and a state the contract did not list must not look like a known one.
import { describe, expect, it } from "vitest";
import { KNOWN_CHARGE_POINT_STATES, UNKNOWN_CHART_COLOR, chargePointStateStyle } from "@/app/dashboard/_components/charge-point-state";

describe("charge point state colours", () => {
  it("give every known state a colour of its own, and an unknown state one no known state has", () => {
    const colours = KNOWN_CHARGE_POINT_STATES.map((state) => chargePointStateStyle(state).color.toLowerCase());
    expect(new Set(colours).size).toBe(colours.length);
    expect(colours).not.toContain(UNKNOWN_CHART_COLOR.toLowerCase());
    expect(chargePointStateStyle("a-state-added-later").color).toBe(UNKNOWN_CHART_COLOR);
  });
});
