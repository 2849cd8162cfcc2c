<?php
/**
 * xkey and Surrogate-Control headers on real anonymous responses from the test site.
 */
class SurrogateKeysTest extends VE_TestCase {

	public function test_home_lists_its_posts_with_listing_keys() {
		$r    = Environment::fetch( '/' );
		$keys = Environment::keys_of( $r );
		$this->assertSame( 200, $r['status'] );
		$latest = get_posts( array( 'numberposts' => 4, 'fields' => 'ids', 'ignore_sticky_posts' => true ) );
		$this->assertCount( 4, $latest );
		foreach ( array( 'home', 'front', 'pl-' . $latest[0], 'pl-' . $latest[1], 'pl-' . $latest[2], 'menus', 'pages', 'pn-' . self::$ids['about'] ) as $suffix ) {
			$this->assertContains( $this->key( $suffix ), $keys, $suffix );
		}
		$this->assertNotContains( $this->key( 'pl-' . $latest[3] ), $keys, 'the 4th post is on page 2' );
		$this->assertNotContains( $this->key( 'p-' . $latest[0] ), $keys, 'listings never carry own-page keys' );
		$this->assertSame( array( 'max-age=86400' ), $r['headers']['surrogate-control'] );
	}

	public function test_single_post_has_own_page_key_and_no_sibling_or_term_listing_keys() {
		$r    = Environment::fetch( '/2026/02/bravo/' );
		$keys = Environment::keys_of( $r );
		$this->assertSame( 200, $r['status'] );
		foreach ( array( 'p-' . self::$ids['bravo'], 'c-' . self::$ids['bravo'], 'u-' . self::$ids['alice'], 't-' . self::$ids['news'], 't-' . self::$ids['featured'] ) as $suffix ) {
			$this->assertContains( $this->key( $suffix ), $keys, $suffix );
		}
		$this->assertNotContains( $this->key( 'tl-' . self::$ids['news'] ), $keys );
		$this->assertNotContains( $this->key( 'pl-' . self::$ids['bravo'] ), $keys );
		$this->assertNotContains( $this->key( 'home' ), $keys );
	}

	public function test_archive_kinds() {
		$cases = array(
			'/category/news/'        => array( 'tl-' . self::$ids['news'], 't-' . self::$ids['news'] ),
			'/tag/featured/'         => array( 'tl-' . self::$ids['featured'] ),
			'/author/alice/'         => array( 'ul-' . self::$ids['alice'], 'u-' . self::$ids['alice'] ),
			'/2026/'                 => array( 'date-2026' ),
			'/2026/03/'              => array( 'date-202603' ),
			'/2026/03/15/'           => array( 'date-20260315', 'pl-' . self::$ids['charlie'] ),
			'/feed/'                 => array( 'feed', 'home' ),
			'/comments/feed/'        => array( 'feed', 'comments' ),
			'/?s=story'              => array( 'search' ),
			'/page/2/'               => array( 'home', 'pl-' . self::$ids['echo'] ),
			'/about/'                => array( 'p-' . self::$ids['about'] ),
		);
		foreach ( $cases as $path => $expected ) {
			$r    = Environment::fetch( $path );
			$keys = Environment::keys_of( $r );
			$this->assertSame( 200, $r['status'], $path );
			foreach ( $expected as $suffix ) {
				$this->assertContains( $this->key( $suffix ), $keys, "$path should carry $suffix" );
			}
		}
	}

	/**
	 * A query loop (core/query, as Twenty Twenty-Five's "More posts" on single posts) carries the
	 * listing keys a publish or unpublish purges, and the terms and authors it filters by.
	 */
	public function test_query_loop_carries_listing_keys() {
		$loop = '<!-- wp:query {"queryId":3,"query":{"perPage":3,"postType":"post","order":"desc","orderBy":"date","author":"' . self::$ids['alice'] . '","taxQuery":{"category":[' . self::$ids['sports'] . ']},"inherit":false}} -->'
			. '<div class="wp-block-query"><!-- wp:post-template --><!-- wp:post-title {"isLink":true} /--><!-- /wp:post-template --></div><!-- /wp:query -->';
		$page = $this->new_post( array( 'post_type' => 'page', 'post_title' => 'Loop page', 'post_name' => 'loop-page', 'post_content' => $loop ) );
		try {
			$r    = Environment::fetch( '/loop-page/' );
			$keys = Environment::keys_of( $r );
			$this->assertSame( 200, $r['status'] );
			$this->assertStringContainsString( 'wp-block-post-template', $r['body'] );
			foreach ( array( 'p-' . $page, 'pta-post', 'home', 'tl-' . self::$ids['sports'], 'ul-' . self::$ids['alice'], 'pl-' . self::$ids['golf'] ) as $suffix ) {
				$this->assertContains( $this->key( $suffix ), $keys, $suffix );
			}
			$this->assertNotContains( $this->key( 'search' ), $keys, 'ordered by date: titles do not move it' );
		} finally {
			wp_delete_post( $page, true );
			$this->end_request();
		}
	}

	public function test_404_is_keyed_and_cacheable() {
		$r = Environment::fetch( '/no/such/page/' );
		$this->assertSame( 404, $r['status'] );
		$this->assertContains( $this->key( '404' ), Environment::keys_of( $r ) );
		$this->assertSame( array( 'max-age=86400' ), $r['headers']['surrogate-control'] );
		// WordPress's no-cache for browsers becomes its browser-side equivalent: Varnish honours
		// private, no-store and no-cache even beside Surrogate-Control.
		$this->assertSame( array( 'max-age=0, must-revalidate' ), $r['headers']['cache-control'] );
	}

	public function test_pages_that_ask_not_to_be_shared_get_no_long_ttl() {
		// A contact form's anonymous nonce expires after 12-24 h: such pages say so with
		// DONOTCACHEPAGE or Cache-Control: no-cache, and stay on the microcache.
		foreach ( array( 'donotcachepage', 'no-cache' ) as $signal ) {
			$r = Environment::fetch( '/2026/02/bravo/?ve-form=' . $signal );
			$this->assertSame( 200, $r['status'], $signal );
			$this->assertStringContainsString( 'Bravo', $r['body'], $signal );
			$this->assertNotEmpty( Environment::keys_of( $r ), $signal . ': keys still sent, for the microcached copy' );
			$this->assertArrayNotHasKey( 'surrogate-control', $r['headers'], $signal );
		}
		$this->assertArrayHasKey( 'surrogate-control', Environment::fetch( '/2026/02/bravo/?ve-form=none' )['headers'], 'the same page without the signal' );
	}

	public function test_rest_item_and_collection() {
		$r = Environment::fetch( '/wp-json/wp/v2/posts/' . self::$ids['bravo'] );
		$this->assertSame( 200, $r['status'] );
		$this->assertContains( $this->key( 'r-p-' . self::$ids['bravo'] ), Environment::keys_of( $r ) );
		$this->assertSame( array( 'max-age=86400' ), $r['headers']['surrogate-control'] );

		$r    = Environment::fetch( '/wp-json/wp/v2/posts' );
		$keys = Environment::keys_of( $r );
		$this->assertContains( $this->key( 'r-c-posts' ), $keys );
		$this->assertContains( $this->key( 'r-p-' . self::$ids['hello'] ), $keys );

		$r = Environment::fetch( '/wp-json/wp/v2/categories' );
		$this->assertContains( $this->key( 'r-c-categories' ), Environment::keys_of( $r ) );
		$this->assertContains( $this->key( 'r-t-' . self::$ids['news'] ), Environment::keys_of( $r ) );
	}

	public function test_sitemap_and_oembed() {
		$r = Environment::fetch( '/wp-sitemap-posts-post-1.xml' );
		$this->assertSame( 200, $r['status'] );
		$this->assertContains( $this->key( 'sitemaps' ), Environment::keys_of( $r ) );
		$this->assertContains( $this->key( 'pn-' . self::$ids['bravo'] ), Environment::keys_of( $r ), 'the sitemap links every post' );
		$this->assertNotContains( $this->key( 'home' ), Environment::keys_of( $r ) );

		$r = Environment::fetch( '/wp-json/oembed/1.0/embed?url=' . rawurlencode( home_url( '/2026/02/bravo/' ) ) );
		$this->assertSame( 200, $r['status'] );
		$this->assertContains( $this->key( 'pl-' . self::$ids['bravo'] ), Environment::keys_of( $r ) );
	}

	public function test_responses_showing_the_site_name_or_tagline_carry_its_key() {
		$name    = get_option( 'blogname' );
		$tagline = get_option( 'blogdescription' );
		$views   = array(
			'page'       => '/2026/02/bravo/',
			'feed'       => '/feed/',
			'404'        => '/no/such/page/',
			'REST index' => '/wp-json/',
			'oEmbed'     => '/wp-json/oembed/1.0/embed?url=' . rawurlencode( home_url( '/2026/02/bravo/' ) ),
		);
		foreach ( $views as $view => $path ) {
			$r = Environment::fetch( $path );
			$this->assertStringContainsString( esc_html( $name ), $r['body'], "$view shows the site name" );
			$this->assertContains( $this->key( 'site-name' ), Environment::keys_of( $r ), $view );
		}
		foreach ( array( '/feed/', '/wp-json/' ) as $path ) {
			$r = Environment::fetch( $path );
			$this->assertStringContainsString( esc_html( $tagline ), $r['body'], "$path shows the tagline" );
			$this->assertContains( $this->key( 'site-tagline' ), Environment::keys_of( $r ), $path );
		}
		$r = Environment::fetch( '/wp-json/wp/v2/posts/' . self::$ids['bravo'] );
		$this->assertStringNotContainsString( $name, $r['body'] );
		$this->assertNotContains( $this->key( 'site-name' ), Environment::keys_of( $r ), 'a REST item does not show the site' );
	}

	public function test_logged_in_responses_carry_no_keys() {
		$cookies = array();
		$expire  = time() + 3600;
		$cookies[ LOGGED_IN_COOKIE ] = wp_generate_auth_cookie( 1, $expire, 'logged_in' );
		$r = Environment::fetch( '/', $cookies );
		$this->assertSame( 200, $r['status'] );
		$this->assertStringContainsString( 'wp-admin-bar', $r['body'], 'the request really was logged in' );
		$this->assertArrayNotHasKey( 'xkey', $r['headers'] );
		$this->assertArrayNotHasKey( 'surrogate-control', $r['headers'] );
	}

	public function test_personal_responses_get_no_long_ttl() {
		// A response that sets a cookie is personal (a must-use plugin sets one on request).
		$mu = Environment::$wp . '/wp-content/mu-plugins';
		if ( ! is_dir( $mu ) ) {
			mkdir( $mu );
		}
		file_put_contents( $mu . '/set-cookie.php', "<?php add_action( 'template_redirect', function () { if ( isset( \$_GET['personal'] ) ) { setcookie( 'personal', '1' ); } }, 5 );" );
		try {
			$r = Environment::fetch( '/?personal=1' );
			$this->assertSame( 200, $r['status'] );
			$this->assertNotEmpty( Environment::keys_of( $r ) );
			$this->assertArrayNotHasKey( 'surrogate-control', $r['headers'] );
			$this->assertArrayHasKey( 'surrogate-control', Environment::fetch( '/' )['headers'] );
		} finally {
			unlink( $mu . '/set-cookie.php' );
		}
	}

	public function test_without_purger_pages_stay_on_the_microcache() {
		$saved = get_option( 'varnish_edge_settings' );
		update_option( 'varnish_edge_settings', array_merge( $saved, array( 'purger_url' => '' ) ) );
		try {
			$r = Environment::fetch( '/' );
			$this->assertNotEmpty( Environment::keys_of( $r ), 'keys are still emitted' );
			$this->assertArrayNotHasKey( 'surrogate-control', $r['headers'] );
		} finally {
			update_option( 'varnish_edge_settings', $saved );
		}
	}

	public function test_every_header_line_stays_within_budget() {
		foreach ( array( '/', '/2026/', '/feed/', '/wp-json/wp/v2/posts?per_page=100' ) as $path ) {
			$r = Environment::fetch( $path );
			foreach ( $r['headers']['xkey'] ?? array() as $line ) {
				$this->assertLessThanOrEqual( 4000, strlen( $line ), $path );
				$this->assertMatchesRegularExpression( '/^[A-Za-z0-9][A-Za-z0-9_.:-]*( [A-Za-z0-9][A-Za-z0-9_.:-]*)*$/', $line );
			}
		}
	}

	public function test_early_flush_keeps_the_partial_response_off_the_long_ttl() {
		// The fixture mu-plugin flushes the page in wp_head (`?ve-early-flush=1`): the keys sent
		// are those known then, so the long TTL would keep a page whose later parts are unkeyed.
		$r = Environment::fetch( '/2026/02/bravo/?ve-early-flush=1' );
		$this->assertSame( 200, $r['status'] );
		$this->assertStringContainsString( 'Bravo', $r['body'] );
		$this->assertNotEmpty( Environment::keys_of( $r ), 'what was known is still sent' );
		$this->assertArrayNotHasKey( 'surrogate-control', $r['headers'], 'stays on the microcache' );
		$this->assertArrayHasKey( 'surrogate-control', Environment::fetch( '/2026/02/bravo/' )['headers'], 'a complete page gets the long TTL' );
	}

	public function test_author_names_printed_by_blocks_carry_the_user_key() {
		// The latest-posts block prints display names through get_the_author_meta().
		$this->assertContains( $this->key( 'u-' . self::$ids['alice'] ), Environment::keys_of( Environment::fetch( '/latest/' ) ) );
		$this->assertContains( $this->key( 'ul-1' ), Environment::keys_of( Environment::fetch( '/author/admin/feed/' ) ), 'the author feed' );
	}

	public function test_gallery_and_reusable_block_record_what_they_render() {
		$img = imagecreatetruecolor( 300, 200 );
		ob_start();
		imagejpeg( $img );
		$upload = wp_upload_bits( 'keyed-gallery.jpg', null, ob_get_clean(), '2025/08' );
		$att    = wp_insert_attachment( array( 'post_title' => 'Keyed', 'post_excerpt' => 'A caption', 'post_mime_type' => 'image/jpeg', 'post_status' => 'inherit' ), $upload['file'] );
		wp_update_attachment_metadata( $att, wp_generate_attachment_metadata( $att, $upload['file'] ) );
		$block = wp_insert_post( array( 'post_type' => 'wp_block', 'post_status' => 'publish', 'post_title' => 'Keyed block', 'post_content' => 'Shared words.' ) );
		$post  = $this->new_post( array( 'post_content' => '[gallery ids="' . $att . '"]' . "\n\n" . '<!-- wp:block {"ref":' . $block . '} /-->' ) );
		$keys  = Environment::keys_of( Environment::fetch( get_permalink( $post ) ) );
		$this->assertContains( $this->key( "e-$att" ), $keys, 'gallery item' );
		$this->assertContains( $this->key( "e-$block" ), $keys, 'reusable block' );

		// Alt text written alone (as the media modal and REST do before the attachment update).
		Environment::clear_webhooks();
		update_post_meta( $att, '_wp_attachment_image_alt', 'New alt' );
		$this->end_request();
		$this->assertContains( $this->key( "e-$att" ), $this->sent_tags( false ) );

		Environment::clear_webhooks();
		wp_update_post( array( 'ID' => $block, 'post_content' => 'Shared words, edited.' ) );
		$this->end_request();
		$this->assertContains( $this->key( "e-$block" ), $this->sent_tags( false ) );
		wp_delete_post( $post, true );
		wp_delete_post( $block, true );
		wp_delete_attachment( $att, true );
		$this->end_request();
	}
}
