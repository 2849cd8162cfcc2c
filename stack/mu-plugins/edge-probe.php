<?php
/*
 * Plugin Name: Edge probe host
 * Description: Varnish's health probe (vcl/default.vcl) asks for /robots.txt with its own Host
 * header. WordPress would answer 301 to the canonical host, which the probe counts as a
 * failure; robots.txt is the same on every host, so it is served as is.
 */
add_filter('redirect_canonical', static function ($redirect) {
    return is_robots() ? false : $redirect;
});
