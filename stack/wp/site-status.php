<?php
// Prints, as one JSON line, what stack/check-site.sh needs to tell a rendered site from an
// empty one and to name the cause: the active theme and whether it is installed, and the
// newest published post (its permalink must appear on the home page). A database WordPress
// cannot reach ends this script in wp-load.php with its own message, which the caller reports.
require __DIR__ . '/bootstrap.php';

$theme  = wp_get_theme();
$latest = get_posts(array('numberposts' => 1, 'post_status' => 'publish', 'post_type' => 'post', 'orderby' => 'date', 'order' => 'DESC'));
$errors = $theme->errors();
echo 'SITE-STATUS ' . wp_json_encode(array(
    'theme'        => get_stylesheet(),
    'theme_ok'     => $theme->exists() && !is_wp_error($errors),
    'theme_error'  => is_wp_error($errors) ? $errors->get_error_message() : '',
    'themes_dir'   => get_theme_root(),
    'block_theme'  => function_exists('wp_is_block_theme') && $theme->exists() && wp_is_block_theme(),
    'latest_url'   => $latest ? get_permalink($latest[0]) : '',
    'posts'        => (int) wp_count_posts('post')->publish,
)) . "\n";
