// Next.js configuration for the partner app.
/** @type {import("next").NextConfig} */
const nextConfig = {
  // The app is served behind whatever the partner deploys it on; never advertise the framework.
  poweredByHeader: false,
  // pino and pg are Node-only; keep them out of the server bundle so their workers and native
  // bindings resolve from node_modules at run time.
  serverExternalPackages: ["pino", "pg", "@prisma/adapter-pg"],
  // `next dev` logs every request URL. The redirect_uri's query holds the authorization code, and
  // no code may reach a log line, so that route is left out of the request log.
  logging: { incomingRequests: { ignore: [/\/oauth\/callback/] } },
  // `npm run lint` runs ESLint; type errors fail the build.
  typescript: { ignoreBuildErrors: false },
};

export default nextConfig;
