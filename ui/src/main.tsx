/** Entry: theme before first paint, link interception, then the shell. */
import { render } from 'preact';
import { App } from './app';
import { applyTheme, storedTheme } from './lib/theme';
import { interceptLinks } from './lib/router';
import './styles.css';

applyTheme(storedTheme());
const root = document.getElementById('app')!;
interceptLinks(document.body);
render(<App />, root);
