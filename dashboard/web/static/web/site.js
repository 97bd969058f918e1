// Progressive enhancement only: every page works without it.
(function () {
  "use strict";
  // Pickers apply themselves when a select changes (without JavaScript the button does); empty
  // fields are left out of the URL so permalinks stay short.
  document.querySelectorAll("form.pickers").forEach(function (form) {
    function prune() {
      Array.prototype.forEach.call(form.elements, function (el) {
        if (el.name && el.value === "") el.disabled = true;
      });
    }
    form.addEventListener("submit", prune);
    if (form.classList.contains("autosubmit")) {
      form.addEventListener("change", function (event) {
        if (event.target.tagName === "SELECT") { prune(); form.submit(); }
      });
    }
  });
  // Copy buttons: data-copy names the element whose text is copied.
  document.querySelectorAll("button.copy").forEach(function (button) {
    var target = document.querySelector(button.getAttribute("data-copy"));
    if (!target) return;
    button.hidden = false;
    button.addEventListener("click", function () {
      var text = target.textContent;
      function done() {
        button.textContent = "copied";
        button.setAttribute("data-copied", "true");
        setTimeout(function () { button.textContent = "copy"; }, 2000);
      }
      function fallback() {
        var range = document.createRange();
        range.selectNodeContents(target);
        var selection = window.getSelection();
        selection.removeAllRanges();
        selection.addRange(range);
        try { document.execCommand("copy"); } catch (e) { /* the text stays selected */ }
        done();
      }
      if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(text).then(done, fallback);
      else fallback();
    });
  });
})();
