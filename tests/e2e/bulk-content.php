<?php
// Content for tests/e2e/bulk-actions.test.mjs, made from PHP with WordPress's own functions (the
// stack's CLI bootstrap, as the web user; no wp-cli in Debian). Prints one JSON line.
//   setup RUN TRASHED    two authors, two categories, 50 tags and TRASHED posts already in the
//                        Trash (for Delete Permanently and Empty Trash), all named after RUN
//   import RUN COUNT     COUNT posts by the first author in one run, the way the WordPress
//                        Importer inserts them (term and comment counting deferred, cache
//                        invalidation suspended, import_start/import_end fired)
require dirname(__DIR__, 2) . '/stack/wp/bootstrap.php';

$mode = $argv[1] ?? '';
$run = preg_replace('/[^a-z0-9]/', '', strtolower($argv[2] ?? ''));
if ('' === $run || !in_array($mode, array('setup', 'import'), true)) {
    fwrite(STDERR, "usage: bulk-content.php setup RUN TRASHED | import RUN COUNT\n");
    exit(2);
}
$fail = static function ($what) {
    fwrite(STDERR, 'bulk-content.php: ' . (is_wp_error($what) ? $what->get_error_message() : $what) . "\n");
    exit(1);
};
$path = static fn($url) => wp_parse_url($url, PHP_URL_PATH);
$paragraphs = static function ($n) {
    $out = '';
    for ($p = 1; $p <= 3; $p++) {
        $out .= "<!-- wp:paragraph -->\n<p>Imported post $n, paragraph $p: bulk actions must leave nothing stale.</p>\n<!-- /wp:paragraph -->\n\n";
    }
    return $out;
};

if ('setup' === $mode) {
    $users = array();
    foreach (array('a', 'b') as $k) {
        $login = "bulk-$k-$run";
        $id = wp_insert_user(array('user_login' => $login, 'user_pass' => wp_generate_password(24), 'user_email' => "$login@example.com", 'display_name' => "Bulk author $k $run", 'role' => 'author'));
        if (is_wp_error($id)) { $fail($id); }
        $users[$k] = array('id' => $id, 'slug' => get_userdata($id)->user_nicename);
    }
    $cats = array();
    foreach (array('imported', 'edited') as $k) {
        $t = wp_insert_term("Bulk $k $run", 'category');
        if (is_wp_error($t)) { $fail($t); }
        $cats[$k] = array('id' => $t['term_id'], 'path' => $path(get_term_link($t['term_id'], 'category')));
    }
    $tags = array();
    for ($i = 1; $i <= 50; $i++) {
        $t = wp_insert_term("bulk-$run-$i", 'post_tag');
        if (is_wp_error($t)) { $fail($t); }
        $tags[] = array('id' => $t['term_id'], 'name' => "bulk-$run-$i", 'path' => $path(get_term_link($t['term_id'], 'post_tag')));
    }
    // Posts an editor trashed earlier: what Delete Permanently and Empty Trash remove. An
    // administrator's, so deleting the bulk authors (whose trashed posts go for good) leaves them.
    $trasher = get_users(array('role' => 'administrator', 'number' => 1, 'fields' => 'ID'))[0];
    $trashed = array();
    $count = (int) ($argv[3] ?? 0);
    for ($i = 1; $i <= $count; $i++) {
        $id = wp_insert_post(array('post_title' => "Trashed earlier $run $i", 'post_content' => $paragraphs($i), 'post_status' => 'trash', 'post_author' => $trasher, 'post_category' => array($cats['imported']['id'])), true);
        if (is_wp_error($id)) { $fail($id); }
        update_post_meta($id, '_wp_trash_meta_status', 'publish');
        update_post_meta($id, '_wp_trash_meta_time', time());
        $trashed[] = $id;
    }
    echo wp_json_encode(array('users' => $users, 'cats' => $cats, 'tags' => $tags, 'trashed' => $trashed)), "\n";
    exit(0);
}

// import: what the WordPress Importer does around its posts (wordpress-importer's import_start()
// and import_end()), so the plugin sees an import as it happens on real sites.
$count = (int) ($argv[3] ?? 0);
$author = get_user_by('login', "bulk-a-$run");
$cat = get_term_by('name', "Bulk imported $run", 'category');
if (!$author || !$cat || $count < 1) { $fail('run setup first, and give a COUNT'); }
wp_defer_term_counting(true);
wp_defer_comment_counting(true);
do_action('import_start');
wp_suspend_cache_invalidation(true);
$now = time();
$posts = array();
for ($i = 0; $i < $count; $i++) {
    // Newest first in $posts; one minute apart, so the lists order them the same way.
    $date = gmdate('Y-m-d H:i:s', $now - 60 - $i * 60);
    $id = wp_insert_post(array(
        'post_title' => "Imported $run " . ($i + 1),
        'post_content' => $paragraphs($i + 1),
        'post_status' => 'publish',
        'post_author' => $author->ID,
        'post_date' => get_date_from_gmt($date),
        'post_date_gmt' => $date,
        'post_category' => array($cat->term_id),
        'tags_input' => array("bulk-$run-" . ($i % 50 + 1), "bulk-$run-" . (($i * 7 + 3) % 50 + 1)),
    ), true);
    if (is_wp_error($id)) { $fail($id); }
    $posts[] = $id;
}
wp_suspend_cache_invalidation(false);
wp_cache_flush();
wp_defer_term_counting(false);
wp_defer_comment_counting(false);
do_action('import_end');
$out = array();
foreach ($posts as $id) {
    $out[] = array('id' => $id, 'path' => $path(get_permalink($id)));
}
echo wp_json_encode(array('posts' => $out)), "\n";
