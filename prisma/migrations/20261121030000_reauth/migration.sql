-- AlterTable
ALTER TABLE "installs" ADD COLUMN     "reauth_requested_at" TIMESTAMPTZ(3);
