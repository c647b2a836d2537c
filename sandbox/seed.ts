// Deterministic seed data: a fixed-seed PRNG builds the same operators, teams, charge points and charges
// on every start and every reset, so tests can compare what the app shows with GET /_sandbox/operators/:id/charge-points.
// Record shapes follow public-facts.md ("Records"); timestamps are fixed, not relative to now.

export interface Operator {
  id: number;
  name: string;
  slug: string;
}

export interface Team {
  id: number;
  name: string;
  type: "private" | "professional" | "operator";
  createdAt: string;
  updatedAt: string;
}

export interface ChargePoint {
  id: number;
  teamId: number;
  siteId: number | null;
  name: string | null;
  serialNumber: string;
  visibility: "private" | "public";
  maxKw: number;
  type: "ac" | "dc";
  state: ChargePointState;
  location: {
    coordinates: { latitude: number; longitude: number };
    addressLabel: string;
    address: { address1: string; zip: string; city: string; country: string };
  };
  connectors: { id: number; identifier: string; name: string }[];
  evseId: string;
  lastMeterReadingKwh: number;
  cablePluggedIn: boolean;
  isActive: boolean;
  lastConnectedAt: string | null;
  createdAt: string;
  updatedAt: string;
  deletedAt: string | null;
}

export type ChargePointState =
  | "available" | "busy" | "busy-blocked" | "busy-charging" | "busy-non-charging" | "busy-non-released"
  | "busy-reserved" | "busy-scheduled" | "error" | "disconnected" | "passive" | "maintenance" | "other";

export interface Charge {
  id: number;
  chargePointId: number;
  siteId: number | null;
  state: "paying" | "reserved" | "starting" | "charging" | "stopping" | "paused" | "scheduled" | "stopped"
    | "releasing" | "released" | "completed" | "other";
  type: "external" | "operator" | "sponsored";
  consumedKwh: number;
  startMeterKwh: number;
  endMeterKwh: number | null;
  startedAt: string;
  stoppedAt: string | null;
  completedAt: string | null;
  failedAt: string | null;
  price: number;
  cost: number;
  currency: { identifier: string; name: string; decimals: number };
  stopReason: string | null;
  failureReason: string | null;
}

export interface OperatorData {
  operator: Operator;
  teams: Team[];
  chargePoints: ChargePoint[];
  charges: Charge[];
  /** What new records of this operator are made of (live.ts): its id ranges, currency and price. */
  profile: OperatorProfile;
}

export interface OperatorProfile {
  ids: IdBases;
  currency: Charge["currency"];
  pricePerKwh: number;
}

export interface SeedData {
  operators: OperatorData[];
}

/** mulberry32: tiny, fast, good enough for fixtures, and identical on every platform. */
function createPrng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface City {
  city: string;
  country: string;
  latitude: number;
  longitude: number;
  streets: string[];
  zipPrefix: string;
}

interface OperatorBlueprint {
  id: number;
  name: string;
  slug: string;
  code: string;
  currency: { identifier: string; name: string; decimals: number };
  pricePerKwh: number;
  chargePointCount: number;
  chargeCount: number;
  teams: { name: string; type: Team["type"] }[];
  cities: City[];
  sitePrefixes: string[];
}

const BLUEPRINTS: OperatorBlueprint[] = [
  {
    id: 1001,
    name: "Northwind Charging",
    slug: "northwind-charging",
    code: "NWC",
    currency: { identifier: "EUR", name: "Euro", decimals: 2 },
    pricePerKwh: 0.39,
    chargePointCount: 23,
    chargeCount: 36,
    teams: [
      { name: "Northwind Operations", type: "operator" },
      { name: "Harbour Logistics Fleet", type: "professional" },
      { name: "Residents Vondelpark", type: "private" },
    ],
    cities: [
      { city: "Amsterdam", country: "NL", latitude: 52.3676, longitude: 4.9041, streets: ["Prinsengracht", "Overtoom", "Javastraat", "Ceintuurbaan"], zipPrefix: "10" },
      { city: "Rotterdam", country: "NL", latitude: 51.9244, longitude: 4.4777, streets: ["Coolsingel", "Witte de Withstraat", "Kop van Zuid"], zipPrefix: "30" },
      { city: "Utrecht", country: "NL", latitude: 52.0907, longitude: 5.1214, streets: ["Oudegracht", "Biltstraat", "Amsterdamsestraatweg"], zipPrefix: "35" },
    ],
    sitePrefixes: ["Depot", "Park & Ride", "Office", "Harbour"],
  },
  {
    id: 1002,
    name: "Fjordline Energy",
    slug: "fjordline-energy",
    code: "FJL",
    currency: { identifier: "NOK", name: "Norwegian krone", decimals: 2 },
    pricePerKwh: 4.9,
    chargePointCount: 7,
    chargeCount: 14,
    teams: [
      { name: "Fjordline Field Service", type: "operator" },
      { name: "Bergen Taxi Cooperative", type: "professional" },
    ],
    cities: [
      { city: "Oslo", country: "NO", latitude: 59.9139, longitude: 10.7522, streets: ["Karl Johans gate", "Bygdøy allé", "Thorvald Meyers gate"], zipPrefix: "0" },
      { city: "Bergen", country: "NO", latitude: 60.3913, longitude: 5.3221, streets: ["Bryggen", "Strandkaien", "Nygårdsgaten"], zipPrefix: "5" },
    ],
    sitePrefixes: ["Ferry Terminal", "Shopping Centre", "Hotel"],
  },
  {
    id: 1003,
    name: "Alpenstrom Mobility",
    slug: "alpenstrom-mobility",
    code: "ASM",
    currency: { identifier: "EUR", name: "Euro", decimals: 2 },
    pricePerKwh: 0.49,
    chargePointCount: 41,
    chargeCount: 52,
    teams: [
      { name: "Alpenstrom Network Ops", type: "operator" },
      { name: "Bavaria Rental Cars", type: "professional" },
      { name: "Tirol Hotels Group", type: "professional" },
      { name: "Staff Home Chargers", type: "private" },
    ],
    cities: [
      { city: "Munich", country: "DE", latitude: 48.1351, longitude: 11.582, streets: ["Leopoldstraße", "Sendlinger Straße", "Arnulfstraße"], zipPrefix: "80" },
      { city: "Vienna", country: "AT", latitude: 48.2082, longitude: 16.3738, streets: ["Mariahilfer Straße", "Praterstraße", "Landstraßer Hauptstraße"], zipPrefix: "10" },
      { city: "Zurich", country: "CH", latitude: 47.3769, longitude: 8.5417, streets: ["Bahnhofstrasse", "Langstrasse", "Seefeldstrasse"], zipPrefix: "80" },
      { city: "Innsbruck", country: "AT", latitude: 47.2692, longitude: 11.4041, streets: ["Maria-Theresien-Straße", "Museumstraße"], zipPrefix: "60" },
    ],
    sitePrefixes: ["Autobahn Rastplatz", "Ski Resort", "Business Park", "Hauptbahnhof", "Hotel"],
  },
];

const BASE_TIME = Date.UTC(2025, 0, 6, 8, 0, 0); // 2025-01-06T08:00:00Z
/** The seed every start uses: the same data on every machine. */
export const DEFAULT_SEED = 0x5eed_2025;
const DAY_MS = 24 * 60 * 60 * 1000;

const CP_STATES: ChargePointState[] = [
  "available", "available", "available", "available", "busy-charging", "busy-charging", "busy-non-charging",
  "busy-reserved", "disconnected", "error", "maintenance", "passive",
];

const CHARGE_STOP_REASONS = ["user", "ev-full", "remote", "idle-timeout"];
const CHARGE_FAILURE_REASONS = ["connector-error", "authorization-rejected", "ev-communication-error"];

function pick<T>(random: () => number, items: readonly T[]): T {
  const item = items[Math.floor(random() * items.length)];
  if (item === undefined) throw new Error("pick() called with an empty list");
  return item;
}

function round(value: number, decimals: number): number {
  const factor = 10 ** decimals;
  return Math.round(value * factor) / factor;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/**
 * Where an operator's record ids start. Seeded operator number `index` (0-based) has charge points
 * `(index + 1) * 10,000 + n` and charges `(index + 1) * 1,000,000 + n`; operators created through the control API
 * have ranges of their own (bulkIdBases), so every record id is unique across the whole service, as a database's are.
 */
export interface IdBases {
  chargePoint: number;
  charge: number;
  /** First id of the charges that appear as the clock moves (live.ts): above every seeded charge of the operator. */
  liveCharge: number;
}

function seededIdBases(index: number): IdBases {
  return { chargePoint: (index + 1) * 10_000, charge: (index + 1) * 1_000_000, liveCharge: (index + 1) * 1_000_000 + 100_000 };
}

/**
 * Charge number `i` (0-based) of an operator: its id is `ids.charge + i + 1`. Every value comes from
 * `random`, in a fixed order, so the same stream always yields the same charges.
 */
function buildCharge(blueprint: OperatorBlueprint, chargePoints: readonly ChargePoint[], random: () => number, ids: IdBases, i: number): Charge {
  const chargePoint = pick(random, chargePoints);
  const startedMs = BASE_TIME + Math.floor(random() * 120 * 24) * 60 * 60 * 1000 + Math.floor(random() * 3600) * 1000;
  const roll = random();
  const state: Charge["state"] = roll < 0.78 ? "completed" : roll < 0.88 ? "charging" : roll < 0.94 ? "stopped" : "other";
  const failed = state === "other";
  const consumedKwh = failed ? 0 : round(3 + random() * (chargePoint.type === "dc" ? 70 : 35), 3);
  const startMeterKwh = round(100 + random() * 30_000, 3);
  const durationMs = Math.floor((consumedKwh / Math.min(chargePoint.maxKw, 50)) * 3600 * 1000) + 5 * 60 * 1000;
  const finished = state === "completed" || state === "stopped";
  const price = round(consumedKwh * blueprint.pricePerKwh, 2);
  return {
    id: ids.charge + i + 1,
    chargePointId: chargePoint.id,
    siteId: chargePoint.siteId,
    state,
    type: pick(random, ["external", "external", "operator", "sponsored"] as const),
    consumedKwh,
    startMeterKwh,
    endMeterKwh: finished ? round(startMeterKwh + consumedKwh, 3) : null,
    startedAt: iso(startedMs),
    stoppedAt: finished ? iso(startedMs + durationMs) : null,
    completedAt: state === "completed" ? iso(startedMs + durationMs + 60_000) : null,
    failedAt: failed ? iso(startedMs + 30_000) : null,
    price,
    cost: round(price * 0.62, 2),
    currency: blueprint.currency,
    stopReason: finished ? pick(random, CHARGE_STOP_REASONS) : null,
    failureReason: failed ? pick(random, CHARGE_FAILURE_REASONS) : null,
  };
}

function buildOperator(blueprint: OperatorBlueprint, random: () => number, ids: IdBases): OperatorData {
  const operator: Operator = { id: blueprint.id, name: blueprint.name, slug: blueprint.slug };

  const teams: Team[] = blueprint.teams.map((team, i) => {
    const created = BASE_TIME - (400 - i * 30) * DAY_MS;
    return {
      id: blueprint.id * 100 + i + 1,
      name: team.name,
      type: team.type,
      createdAt: iso(created),
      updatedAt: iso(created + Math.floor(random() * 200) * DAY_MS),
    };
  });

  // Sites: one per (city, prefix) pair that gets used; ids are stable per operator.
  const siteIds = new Map<string, number>();
  const chargePoints: ChargePoint[] = [];
  for (let i = 0; i < blueprint.chargePointCount; i += 1) {
    const city = pick(random, blueprint.cities);
    const street = pick(random, city.streets);
    const sitePrefix = pick(random, blueprint.sitePrefixes);
    const siteKey = `${city.city}/${sitePrefix}`;
    let siteId = siteIds.get(siteKey);
    if (siteId === undefined) {
      siteId = blueprint.id * 1000 + siteIds.size + 1;
      siteIds.set(siteKey, siteId);
    }
    const isDc = random() < 0.3;
    const maxKw = isDc ? pick(random, [50, 150, 300]) : pick(random, [11, 22]);
    const id = ids.chargePoint + i + 1;
    const houseNumber = 1 + Math.floor(random() * 180);
    const zip = `${city.zipPrefix}${String(10 + Math.floor(random() * 89)).padStart(2, "0")}`;
    const created = BASE_TIME - Math.floor(random() * 300) * DAY_MS;
    const state = pick(random, CP_STATES);
    const connectorCount = isDc ? 2 : random() < 0.5 ? 1 : 2;
    const connectors = Array.from({ length: connectorCount }, (_, c) => ({
      id: id * 10 + c + 1,
      identifier: String(c + 1),
      name: isDc ? (c === 0 ? "CCS2" : "CHAdeMO") : "Type 2",
    }));
    const number = String(i + 1).padStart(2, "0");
    const hasName = random() > 0.08; // a few charge points have no name, as in the real API (name is nullable)
    chargePoints.push({
      id,
      teamId: pick(random, teams).id,
      siteId: random() < 0.9 ? siteId : null,
      name: hasName ? `${city.city} ${sitePrefix} ${isDc ? "HPC" : "AC"} ${number}` : null,
      serialNumber: `${blueprint.code}-${isDc ? "DC" : "AC"}${maxKw}-${String(100_000 + Math.floor(random() * 900_000))}`,
      visibility: random() < 0.7 ? "public" : "private",
      maxKw,
      type: isDc ? "dc" : "ac",
      state,
      location: {
        coordinates: {
          latitude: round(city.latitude + (random() - 0.5) * 0.08, 6),
          longitude: round(city.longitude + (random() - 0.5) * 0.12, 6),
        },
        addressLabel: `${street} ${houseNumber}, ${city.city}`,
        address: { address1: `${street} ${houseNumber}`, zip, city: city.city, country: city.country },
      },
      connectors,
      evseId: `${city.country}*${blueprint.code}*E${id}`, // EVSE ids carry the country of the site
      lastMeterReadingKwh: round(500 + random() * 40_000, 3),
      cablePluggedIn: state.startsWith("busy"),
      isActive: state !== "passive",
      lastConnectedAt: state === "disconnected" ? iso(BASE_TIME - Math.floor(random() * 20) * DAY_MS) : iso(BASE_TIME - Math.floor(random() * 600) * 1000),
      createdAt: iso(created),
      updatedAt: iso(created + Math.floor(random() * 60) * DAY_MS),
      deletedAt: null,
    });
  }

  const charges: Charge[] = [];
  for (let i = 0; i < blueprint.chargeCount; i += 1) charges.push(buildCharge(blueprint, chargePoints, random, ids, i));
  charges.sort((a, b) => a.id - b.id);

  return { operator, teams, chargePoints, charges, profile: { ids, currency: blueprint.currency, pricePerKwh: blueprint.pricePerKwh } };
}

/**
 * Operator 1000 + n beyond the three above (SANDBOX_OPERATORS, README decision 34): a small, plain
 * operator, so a load test can install the app for as many operators as it needs (one live install
 * per operator). Built after the three, so theirs stay byte-identical whatever the count.
 */
function extraBlueprint(n: number): OperatorBlueprint {
  const like = BLUEPRINTS[n % BLUEPRINTS.length]!;
  return {
    id: 1000 + n,
    name: `Extra Operator ${n}`,
    slug: `extra-operator-${n}`,
    code: `X${String(n).padStart(2, "0")}`,
    currency: like.currency,
    pricePerKwh: like.pricePerKwh,
    chargePointCount: 3,
    chargeCount: 2,
    teams: [{ name: `Extra Operator ${n} Operations`, type: "operator" }],
    cities: like.cities.slice(0, 1),
    sitePrefixes: ["Depot"],
  };
}

/** The number of operators when SANDBOX_OPERATORS is not set: the three above. */
export const SEEDED_OPERATORS = BLUEPRINTS.length;

/**
 * SANDBOX_CHARGES_PER_OPERATOR (README decision 39): exactly `count` charges for the operator. Fewer than the seed
 * makes: its first `count`. More: the seed's, then new ones from a PRNG of the operator's own (seeded with the seed
 * and the operator id), so the default seed's stream, and with it every other operator, is untouched and the first
 * charges stay byte-identical whatever the count.
 */
function withChargeCount(data: OperatorData, blueprint: OperatorBlueprint, ids: IdBases, count: number, seed: number): OperatorData {
  if (count <= data.charges.length) return { ...data, charges: data.charges.slice(0, count) };
  const random = createPrng((seed ^ Math.imul(blueprint.id, 0x9e3779b1)) >>> 0);
  const charges = [...data.charges];
  for (let i = charges.length; i < count; i += 1) charges.push(buildCharge(blueprint, data.chargePoints, random, ids, i));
  return { ...data, charges };
}

/**
 * Builds the whole seed; the same seed, operator count and charge count always yield byte-identical data.
 * `chargesPerOperator` absent: the counts in the README's table (36, 14, 52, and 2 per extra operator).
 */
export function buildSeed(seed = DEFAULT_SEED, operatorCount = SEEDED_OPERATORS, chargesPerOperator?: number): SeedData {
  const random = createPrng(seed);
  const blueprints = [...BLUEPRINTS];
  for (let n = BLUEPRINTS.length + 1; n <= operatorCount; n += 1) blueprints.push(extraBlueprint(n));
  const operators = blueprints.map((blueprint, index) => buildOperator(blueprint, random, seededIdBases(index)));
  if (chargesPerOperator === undefined) return { operators };
  return { operators: operators.map((data, index) => withChargeCount(data, blueprints[index]!, seededIdBases(index), chargesPerOperator, seed)) };
}

// ----- the large operator (README decision 40) ------------------------------------------------------------------

/** The large operator's id: apart from the seeded ones (1001-1003) and the extra ones (1004-1200). */
export const LARGE_OPERATOR_ID = 2001;

const LARGE_BLUEPRINT: OperatorBlueprint = {
  id: LARGE_OPERATOR_ID,
  name: "Nordic Mega Charging",
  slug: "nordic-mega-charging",
  code: "NMC",
  currency: { identifier: "SEK", name: "Swedish krona", decimals: 2 },
  pricePerKwh: 3.9,
  chargePointCount: 500,
  chargeCount: 20_000,
  teams: [
    { name: "Nordic Mega Network Operations", type: "operator" },
    { name: "Nordic Mega Field Service", type: "operator" },
    { name: "Stockholm Taxi Fleet", type: "professional" },
    { name: "Göteborg Logistics", type: "professional" },
    { name: "Øresund Car Sharing", type: "professional" },
    { name: "Residents Södermalm", type: "private" },
  ],
  cities: [
    { city: "Stockholm", country: "SE", latitude: 59.3293, longitude: 18.0686, streets: ["Drottninggatan", "Götgatan", "Sveavägen", "Hornsgatan"], zipPrefix: "11" },
    { city: "Gothenburg", country: "SE", latitude: 57.7089, longitude: 11.9746, streets: ["Avenyn", "Linnégatan", "Första Långgatan"], zipPrefix: "41" },
    { city: "Malmö", country: "SE", latitude: 55.605, longitude: 13.0038, streets: ["Södra Förstadsgatan", "Amiralsgatan", "Östra Rönneholmsvägen"], zipPrefix: "21" },
    { city: "Uppsala", country: "SE", latitude: 59.8586, longitude: 17.6389, streets: ["Kungsgatan", "Dragarbrunnsgatan"], zipPrefix: "75" },
    { city: "Copenhagen", country: "DK", latitude: 55.6761, longitude: 12.5683, streets: ["Strøget", "Vesterbrogade", "Nørrebrogade"], zipPrefix: "1" },
  ],
  sitePrefixes: ["Depot", "Park & Ride", "Shopping Centre", "Office", "Harbour", "Airport", "Hotel", "Motorway Services"],
};

/**
 * "Nordic Mega Charging": 500 charge points, 20,000 charges, six teams, dozens of sites. Built from a PRNG of its own
 * (seeded with the seed and its id), so it never shifts the stream of the seeded operators, and only when first asked
 * for (operators.ts): a start that never touches it does not pay for it. Its ids sit in a range of their own (as
 * seeded operator number 900 would have them), far above every other seeded operator's.
 */
export function buildLargeOperator(seed = DEFAULT_SEED): OperatorData {
  const random = createPrng((seed ^ Math.imul(LARGE_BLUEPRINT.id, 0x9e3779b1)) >>> 0);
  return buildOperator(LARGE_BLUEPRINT, random, seededIdBases(900));
}

/** The large operator's name and slug, without building its records (the portal's list, the install's slug). */
export const LARGE_OPERATOR: Operator = { id: LARGE_BLUEPRINT.id, name: LARGE_BLUEPRINT.name, slug: LARGE_BLUEPRINT.slug };
export const LARGE_OPERATOR_CURRENCY = LARGE_BLUEPRINT.currency.identifier;
export const LARGE_OPERATOR_COUNTS = { chargePoints: LARGE_BLUEPRINT.chargePointCount, charges: LARGE_BLUEPRINT.chargeCount, teams: LARGE_BLUEPRINT.teams.length };

// ----- operators created through the control API (README decision 41) -------------------------------------------

/** Bulk operator number `n` (1-based) has the id BULK_OPERATOR_ID_BASE + n. */
export const BULK_OPERATOR_ID_BASE = 100_000;
/** How many bulk operators can exist in all: their record ids must fit the ranges below. */
export const MAX_BULK_OPERATORS = 100_000;
/** Charge points of every bulk operator. */
export const BULK_CHARGE_POINTS = 3;
/** Charges per bulk operator at most (their id range is 1,000 wide). */
export const MAX_BULK_CHARGES = 1000;

/**
 * Record ids of bulk operator `n`: charge points from 100,000,000 (10 per operator), charges from 1,100,000,000
 * (1,000 per operator), and the charges that appear as the clock moves from 4,000,000,000 (a million per operator).
 * Those last ones are above 2^31 on purpose: the public reference types every id as int64, so an app that stores
 * them in a 32-bit column breaks here and not in production.
 */
export function bulkIdBases(n: number): IdBases {
  return { chargePoint: 100_000_000 + n * 10, charge: 1_100_000_000 + n * 1000, liveCharge: 4_000_000_000 + n * 1_000_000 };
}

function bulkBlueprint(n: number, chargeCount: number): OperatorBlueprint {
  const like = BLUEPRINTS[n % BLUEPRINTS.length]!;
  return {
    id: BULK_OPERATOR_ID_BASE + n,
    name: `Bulk Operator ${n}`,
    slug: `bulk-operator-${n}`,
    code: `B${n}`,
    currency: like.currency,
    pricePerKwh: like.pricePerKwh,
    chargePointCount: BULK_CHARGE_POINTS,
    chargeCount,
    teams: [{ name: `Bulk Operator ${n} Operations`, type: "operator" }],
    cities: like.cities.slice(0, 1),
    sitePrefixes: ["Depot"],
  };
}

export function bulkOperatorCurrency(n: number): string {
  return BLUEPRINTS[n % BLUEPRINTS.length]!.currency.identifier;
}

/** Bulk operator `n` with `chargeCount` charges: one team, three charge points, from a PRNG of its own. */
export function buildBulkOperator(n: number, chargeCount: number, seed = DEFAULT_SEED): OperatorData {
  const blueprint = bulkBlueprint(n, chargeCount);
  const random = createPrng((seed ^ Math.imul(blueprint.id, 0x9e3779b1)) >>> 0);
  return buildOperator(blueprint, random, bulkIdBases(n));
}

export function bulkOperator(n: number): Operator {
  return { id: BULK_OPERATOR_ID_BASE + n, name: `Bulk Operator ${n}`, slug: `bulk-operator-${n}` };
}

// ----- shared pieces for records made later (live.ts) -------------------------------------------------------------

export { createPrng, pick, round, iso, CHARGE_STOP_REASONS, CP_STATES };
