// The sandbox's page shell: one stylesheet, a header, and a footer that says what this is.
import { html, raw } from "hono/html";

type Html = ReturnType<typeof html>;

const STYLES = `
  :root { color-scheme: light; --ink:#17202a; --muted:#5d6b7a; --line:#dde3ea; --bg:#f5f7fa; --card:#fff;
          --accent:#0f7b5f; --accent-ink:#fff; --warn:#8a5a00; --warn-bg:#fff6e0; --danger:#b42318; }
  * { box-sizing: border-box; }
  body { margin:0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color:var(--ink); background:var(--bg); }
  header.top { background:#0b3d31; color:#fff; padding:14px 24px; display:flex; align-items:center; justify-content:space-between; }
  header.top a { color:#fff; text-decoration:none; font-weight:600; }
  header.top .who { font-size:13px; opacity:.85; }
  main { max-width: 760px; margin: 32px auto; padding: 0 20px; }
  h1 { font-size: 24px; margin: 0 0 8px; }
  h2 { font-size: 18px; margin: 0 0 6px; }
  p.lead { color: var(--muted); margin-top: 0; }
  .card { background:var(--card); border:1px solid var(--line); border-radius:10px; padding:20px 22px; margin:16px 0; }
  ul.plain { list-style:none; padding:0; margin:0; }
  ul.plain > li { border-bottom:1px solid var(--line); padding:10px 0; }
  ul.plain > li:last-child { border-bottom:0; }
  ul.scopes { padding-left: 20px; margin: 8px 0 4px; }
  ul.scopes li { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 14px; padding: 2px 0; }
  dl.scope-help { display:grid; grid-template-columns: max-content 1fr; gap: 4px 14px; font-size: 13px; color: var(--muted); margin: 12px 0 0; }
  dl.scope-help dt { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; }
  dl.scope-help dd { margin: 0; }
  a { color: var(--accent); }
  .operator-link { font-size: 17px; font-weight: 600; text-decoration: none; }
  .muted { color: var(--muted); font-size: 13px; }
  .badge { display:inline-block; font-size:12px; font-weight:600; padding:2px 8px; border-radius:999px; background:#e3f4ee; color:var(--accent); margin-left:8px; vertical-align:middle; }
  .badge.warn { background: var(--warn-bg); color: var(--warn); }
  .row { display:flex; gap:10px; align-items:center; flex-wrap:wrap; margin-top:14px; }
  button { font: inherit; font-weight:600; border-radius:8px; padding:9px 18px; cursor:pointer; border:1px solid var(--accent); background:var(--accent); color:var(--accent-ink); }
  button.secondary { background:#fff; color:var(--ink); border-color:var(--line); }
  button.danger { background:#fff; color:var(--danger); border-color:#f1c6c2; }
  form.inline { display:inline; margin:0; }
  .notice { background: var(--warn-bg); border:1px solid #f2d9a0; color: var(--warn); border-radius:8px; padding:10px 14px; }
  .error { border-left: 4px solid var(--danger); }
  code { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 13px; background:#eef1f5; padding:1px 5px; border-radius:4px; }
  footer { max-width:760px; margin: 0 auto 40px; padding: 0 20px; font-size:12px; color:var(--muted); }
  table.events { width:100%; border-collapse: collapse; font-size: 13px; }
  table.events td, table.events th { text-align:left; padding:4px 6px; border-bottom:1px solid var(--line); vertical-align: top; }
  table.events td.num { text-align:right; font-variant-numeric: tabular-nums; }
  main.wide, footer.wide { max-width: 1180px; }
  header.top nav { display:inline; }
  header.top nav a { font-weight: 400; font-size: 13px; margin-left: 14px; opacity: .9; }
  header.top nav a[aria-current="page"] { text-decoration: underline; }
  .ok { color: var(--accent); font-weight:600; }
  .bad { color: var(--danger); font-weight:600; }
  fieldset { border:1px solid var(--line); border-radius:8px; padding:10px 14px; margin:10px 0; }
  legend { font-weight:600; font-size:14px; padding: 0 4px; }
  label.check { display:block; padding:2px 0; }
  input[type=text], select { font: inherit; padding:6px 8px; border:1px solid var(--line); border-radius:6px; }
  input[type=text] { width: 100%; }
  .success { background:#e3f4ee; border:1px solid #b9e2d3; color:#0b5a45; border-radius:8px; padding:10px 14px; }
  .sr { position:absolute; width:1px; height:1px; overflow:hidden; clip:rect(0 0 0 0); white-space:nowrap; }
  .badge.bad-badge { background:#fde8e6; color: var(--danger); }
  ol.steps { list-style:none; padding:0; margin:12px 0 0; }
  ol.steps > li { border:1px solid var(--line); border-left:4px solid var(--accent); border-radius:8px; padding:10px 12px; margin:10px 0; overflow-wrap:anywhere; }
  ol.steps > li.failed { border-left-color: var(--danger); background:#fffafa; }
  ol.steps > li.note { border-style:dashed; border-left-width:1px; color:var(--muted); font-size:13px; }
  .step-head { display:flex; flex-wrap:wrap; gap:4px 10px; align-items:baseline; }
  .step-n { font-weight:700; min-width:1.2em; }
  .caller { font-size:12px; font-weight:600; padding:1px 8px; border-radius:999px; background:#eef1f5; color:var(--ink); }
  .caller.app { background:#e8eefc; color:#1d3f91; }
  .caller.service { background:#f3e8fc; color:#5b2191; }
  .step-title { margin-top:4px; font-size:14px; }
  ul.checks { list-style:none; padding:0; margin:8px 0 0; font-size:14px; }
  ul.checks li { position:relative; padding:2px 0 2px 22px; }
  ul.checks .mark { position:absolute; left:0; width:18px; text-align:center; }
  ul.results { margin:6px 0 0; padding-left:20px; font-size:13px; color:var(--muted); }
  .answer { margin-top:6px; font-size:13px; }
`;

/** Which part of the service a page belongs to: it names the header. */
export type Area = "portal" | "console" | "deliveries";

const AREAS: Record<Area, { label: string; href: string }> = {
  portal: { label: "operator portal", href: "/portal" },
  console: { label: "app owner console", href: "/console" },
  deliveries: { label: "webhook deliveries", href: "/portal/deliveries" },
};

export function layout(options: { title: string; who?: string | null; body: Html; area?: Area; wide?: boolean }): Html {
  const area = options.area ?? "portal";
  const current = AREAS[area];
  return html`<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>${options.title} · Volt sandbox</title>
    <style>${raw(STYLES)}</style>
  </head>
  <body>
    <header class="top">
      <a href="${current.href}">Volt sandbox · ${current.label}</a>
      <span>
        ${options.who ? html`<span class="who">Signed in as ${options.who}</span>` : ""}
        <nav aria-label="Sandbox areas">
          ${(Object.keys(AREAS) as Area[]).map(
            (key) => html`<a href="${AREAS[key].href}"${key === area ? raw(' aria-current="page"') : ""}>${AREAS[key].label}</a>`,
          )}
        </nav>
      </span>
    </header>
    <main class="${options.wide ? "wide" : ""}">${options.body}</main>
    <footer class="${options.wide ? "wide" : ""}">
      This is the local sandbox of the partner integration service: identity provider, operator portal,
      partner API and webhooks, for development only. Nothing here is production data.
    </footer>
  </body>
</html>`;
}

export function errorPage(options: { title: string; message: string; detail?: string; who?: string | null }): Html {
  return layout({
    title: options.title,
    who: options.who,
    body: html`<div class="card error">
      <h1>${options.title}</h1>
      <p>${options.message}</p>
      ${options.detail ? html`<p class="muted">${options.detail}</p>` : ""}
      <p><a href="/portal">Back to the operator portal</a></p>
    </div>`,
  });
}
