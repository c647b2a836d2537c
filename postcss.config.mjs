// Tailwind CSS 4 runs as a PostCSS plugin.
export default {
  plugins: { "@tailwindcss/postcss": {} },
};
