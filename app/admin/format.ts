// How the console writes times: UTC, to the second, so staff can line them up with server logs
// and with the service's own records; expiries also say how far away they are.

/** `2026-11-21 10:32:05 UTC` */
export function formatTime(date: Date): string {
  return `${date.toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

/** `in 55 min`, `3 h ago`, `in 12 d`: the distance from `now`, rounded down to one unit. */
export function formatDistance(date: Date, now: Date): string {
  const ms = date.getTime() - now.getTime();
  const abs = Math.abs(ms);
  const [amount, unit] =
    abs < 60_000
      ? [Math.floor(abs / 1000), "s"]
      : abs < 3_600_000
        ? [Math.floor(abs / 60_000), "min"]
        : abs < 86_400_000
          ? [Math.floor(abs / 3_600_000), "h"]
          : [Math.floor(abs / 86_400_000), "d"];
  return ms >= 0 ? `in ${amount} ${unit}` : `${amount} ${unit} ago`;
}
