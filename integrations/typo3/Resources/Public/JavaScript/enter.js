/*
 * Waymark module: sends the whole browser window (not only the module frame) to Waymark's sign-in URL.
 */
const box = document.querySelector('[data-waymark-enter]');
if (box) {
  const url = box.getAttribute('data-waymark-enter');
  const link = box.querySelector('[data-waymark-link]');
  const go = () => {
    try {
      window.top.location.href = url;
    } catch (e) {
      window.location.href = url;
    }
  };
  if (link) {
    link.addEventListener('click', (event) => {
      event.preventDefault();
      go();
    });
  }
  if (url && box.getAttribute('data-waymark-auto') === '1') {
    go();
  }
}
