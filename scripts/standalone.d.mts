// Types for scripts/standalone.mjs (plain JavaScript so that it runs in the runtime image).
export function prepareStandalone(dir?: string): string;
