// /api/auth/*: next-auth's own routes (session, CSRF, sign-out).
import NextAuth from "next-auth";
import { authOptions } from "@/lib/auth/options";

// Built per request so the environment is read at run time, not at build time.
function handler(request: Request, context: { params: Promise<{ nextauth: string[] }> }) {
  return NextAuth(request as never, context as never, authOptions());
}

export { handler as GET, handler as POST };
