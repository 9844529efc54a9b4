// Lint: the recommended sets of ESLint, typescript-eslint and eslint-plugin-vue (formatting is
// Prettier's), and a length limit on production functions, so that no closure grows past a screen
// or two again (factories keep their verbs in files of their own).
import js from '@eslint/js'
import vue from 'eslint-plugin-vue'
import globals from 'globals'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  { ignores: ['node_modules/', 'js/', 'css/', 'dist/', 'data/', 'test/artifacts/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  ...vue.configs['flat/essential'],
  {
    files: ['**/*.vue'],
    languageOptions: { parserOptions: { parser: tseslint.parser } },
  },
  {
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
    rules: {
      // `_name`: a parameter a signature needs (an express error handler's `next`) but the body does not.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' }],
      // Refusing control characters in paths, names and XML is what those expressions are for.
      'no-control-regex': 'off',
    },
  },
  {
    // Production code: the parts, the simulated peers, the tab and the scripts.
    files: ['server/**/*.{ts,js}', 'plugin-ui/**/*.{ts,vue}', 'scripts/**/*.ts'],
    rules: {
      'max-lines-per-function': ['error', { max: 120, skipBlankLines: true, skipComments: true }],
    },
  },
  {
    // A declaration file pulls in another's ambient declarations the only way it can.
    files: ['**/*.d.ts'],
    rules: { '@typescript-eslint/triple-slash-reference': 'off' },
  },
  {
    // Tests read JSON answers loosely, as a client would.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
)
