<?php
// Creates demo content once: STACK_DEMO_POSTS posts (default 300) spread over 8 categories
// and 30 tags, dated over the past year, most with approved comments. Deterministic (seeded).
require __DIR__ . '/bootstrap.php';
if (get_option('stack_demo_content')) { exit(0); }

$count = (int) (getenv('STACK_DEMO_POSTS') ?: 300);
mt_srand(20261122);
$words = explode(' ', 'varnish cache edge purge origin latency header surrogate key stale fresh ' .
    'request response backend grace object storage ban lurker worker queue redis stream ' .
    'webhook signature secret plugin theme archive feed category tag comment editor author ' .
    'river mountain harbour garden kitchen market station library museum bridge island forest');
$pick = fn(int $n) => implode(' ', array_map(fn() => $words[mt_rand(0, count($words) - 1)], range(1, $n)));

$cats = [];
foreach (['News', 'Technology', 'Travel', 'Food', 'Sports', 'Culture', 'Science', 'Opinion'] as $name) {
    $t = term_exists($name, 'category') ?: wp_insert_term($name, 'category');
    $cats[] = (int) $t['term_id'];
}
$tags = [];
for ($i = 1; $i <= 30; $i++) { $tags[] = 'topic-' . $i; }

wp_defer_term_counting(true);
wp_defer_comment_counting(true);
$author = get_user_by('login', getenv('STACK_ADMIN_USER') ?: 'admin')->ID;
$now = time();
for ($i = 1; $i <= $count; $i++) {
    $paras = '';
    for ($p = 0, $np = mt_rand(3, 6); $p < $np; $p++) {
        $paras .= "<!-- wp:paragraph -->\n<p>" . ucfirst($pick(mt_rand(25, 60))) . ".</p>\n<!-- /wp:paragraph -->\n\n";
    }
    $date = gmdate('Y-m-d H:i:s', $now - ($count - $i) * 86400 * 365 / max($count, 1) - 3600);
    $id = wp_insert_post([
        'post_title' => ucfirst($pick(mt_rand(3, 7))) . " $i",
        'post_content' => $paras,
        'post_excerpt' => '',
        'post_status' => 'publish',
        'post_author' => $author,
        'post_date' => $date,
        'post_date_gmt' => $date,
        'post_category' => array_values(array_unique([$cats[mt_rand(0, 7)], $cats[mt_rand(0, 7)]])),
        'tags_input' => array_map(fn() => $tags[mt_rand(0, 29)], range(1, mt_rand(1, 4))),
    ], true);
    if (is_wp_error($id)) { fwrite(STDERR, $id->get_error_message() . "\n"); exit(1); }
    for ($c = 0, $nc = mt_rand(0, 4); $c < $nc; $c++) {
        wp_insert_comment([
            'comment_post_ID' => $id,
            'comment_author' => 'Reader ' . mt_rand(1, 99),
            'comment_author_email' => 'reader' . mt_rand(1, 99) . '@example.com',
            'comment_content' => ucfirst($pick(mt_rand(8, 30))) . '.',
            'comment_approved' => 1,
            'comment_date' => $date,
            'comment_date_gmt' => $date,
        ]);
    }
}
wp_defer_term_counting(false);
wp_defer_comment_counting(false);
// A page printing term counts (the Categories block with counts, a tag cloud with counts), as
// many sidebars do: a post joining or leaving a term changes it (the audit checks it).
$topics = wp_insert_post([
    'post_type' => 'page',
    'post_title' => 'Topics',
    'post_name' => 'topics',
    'post_status' => 'publish',
    'post_author' => $author,
    'post_content' => "<!-- wp:categories {\"showPostCounts\":true} /-->\n\n<!-- wp:tag-cloud {\"showTagCounts\":true} /-->\n",
], true);
if (is_wp_error($topics)) { fwrite(STDERR, $topics->get_error_message() . "\n"); exit(1); }
// The install's "Hello world!" and sample page stay: they are ordinary content too.
update_option('stack_demo_content', $count);
echo "wordpress: created $count demo posts\n";
