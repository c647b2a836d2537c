-- AlterTable
ALTER TABLE "installs" ADD COLUMN     "config_updated_at" TIMESTAMPTZ(3),
ADD COLUMN     "last_reconciled_at" TIMESTAMPTZ(3);
