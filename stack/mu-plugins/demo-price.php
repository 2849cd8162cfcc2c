<?php
/*
 * Plugin Name: Demo price field
 * Description: Prints a post's `price` custom field under its content, as shops (WooCommerce
 * prices and stock), ACF fields and SEO plugins print post meta. It makes the demo site behave
 * like a real one: a change of that field alone must reach the edge. The field is editable
 * through the REST API (`meta.price`) by anyone who may edit the post.
 */
add_action('init', static function () {
    register_post_meta('post', 'price', array(
        'type'          => 'string',
        'single'        => true,
        'show_in_rest'  => true,
        'auth_callback' => static function ($allowed, $key, $post_id) {
            return current_user_can('edit_post', $post_id);
        },
    ));
});

add_filter('the_content', static function ($content) {
    if (!is_singular('post') || !in_the_loop()) {
        return $content;
    }
    $price = get_post_meta(get_the_ID(), 'price', true);
    if ('' === $price) {
        return $content;
    }
    return $content . '<p class="demo-price">' . esc_html__('Price:', 'default') . ' ' . esc_html($price) . '</p>';
});
