<?php
/**
 * Conformance harness: render a matrix of views anonymously, record their keys, apply a matrix of
 * edits, and compare what each edit invalidated (the events that reached the receiver) with what
 * really changed (the re-rendered output).
 *
 * under-invalidation: a view's output changed but nothing in the batch reached it (stale page);
 * over-invalidation:  a view was invalidated although its output did not change.
 */
class ConformanceTest extends VE_TestCase {

	/** @var array<string,array> Report rows per edit. */
	public static $report = array();

	/** @var array<string,mixed> The site's name, tagline, icon and logo, put back after the run. */
	private static $identity = array();

	/**
	 * Content made for the harness: an image attachment with alt text and caption shown by a
	 * `[gallery]` post that also renders a reusable block, the global styles post, the `price`
	 * custom field on charlie (printed by the fixture mu-plugin on its page), a post whose own
	 * template lists the 10 latest posts with a query loop.
	 */
	public static function setUpBeforeClass(): void {
		parent::setUpBeforeClass();
		foreach ( array( 'blogname', 'blogdescription', 'site_icon', 'site_logo' ) as $option ) {
			self::$identity[ $option ] = get_option( $option, null );
		}
		wp_set_current_user( 1 ); // The global styles post gets its theme term only for a user who may assign it.
		$img = imagecreatetruecolor( 640, 480 );
		imagefilledrectangle( $img, 0, 0, 200, 479, imagecolorallocate( $img, 30, 90, 200 ) );
		ob_start();
		imagejpeg( $img, null, 70 );
		$upload = wp_upload_bits( 'harness-gallery.jpg', null, ob_get_clean(), '2025/07' );
		$att    = wp_insert_attachment( array( 'post_title' => 'Harness picture', 'post_excerpt' => 'Original caption', 'post_mime_type' => 'image/jpeg', 'post_status' => 'inherit' ), $upload['file'] );
		wp_update_attachment_metadata( $att, wp_generate_attachment_metadata( $att, $upload['file'] ) );
		update_post_meta( $att, '_wp_attachment_image_alt', 'Original alt' );
		$block   = wp_insert_post( array( 'post_type' => 'wp_block', 'post_status' => 'publish', 'post_title' => 'Harness block', 'post_content' => '<!-- wp:paragraph --><p>Shared block, first version.</p><!-- /wp:paragraph -->' ) );
		$gallery = wp_insert_post(
			array(
				'post_title'   => 'Gallery',
				'post_name'    => 'gallery',
				'post_status'  => 'publish',
				'post_date'    => '2020-01-10 10:00:00',
				'post_content' => "[gallery ids=\"$att\" link=\"file\"]\n\n<!-- wp:block {\"ref\":$block} /-->",
			)
		);
		// A single post whose template lists recent posts with a query loop (core/query), as
		// Twenty Twenty-Five's single template does ("More posts"), on any WordPress and theme.
		$loop_host = wp_insert_post(
			array(
				'post_title'   => 'Loop host',
				'post_name'    => 'loop-host',
				'post_status'  => 'publish',
				'post_date'    => '2020-01-05 10:00:00',
				'post_content' => '<!-- wp:paragraph --><p>A post whose template lists recent posts.</p><!-- /wp:paragraph -->',
			)
		);
		$loop_template = wp_insert_post(
			array(
				'post_type'    => 'wp_template',
				'post_status'  => 'publish',
				'post_name'    => 'single-post-loop-host',
				'post_title'   => 'Single: loop host',
				'post_content' => '<!-- wp:post-title {"level":1} /--><!-- wp:post-content /-->'
					. '<!-- wp:query {"queryId":7,"query":{"perPage":10,"pages":0,"offset":0,"postType":"post","order":"desc","orderBy":"date","author":"","search":"","exclude":[],"sticky":"","inherit":false}} -->'
					. '<div class="wp-block-query"><!-- wp:post-template --><!-- wp:post-title {"isLink":true} /--><!-- wp:post-date /--><!-- /wp:post-template --></div><!-- /wp:query -->',
			)
		);
		wp_set_post_terms( $loop_template, array( get_stylesheet() ), 'wp_theme' );
		$styles = WP_Theme_JSON_Resolver::get_user_data_from_wp_global_styles( wp_get_theme(), true );
		update_post_meta( self::$ids['delta'], 'price', '10' ); // Shown on 'single sibling' (charlie's URL moves).
		foreach ( array( 've_fixture_notice', 've_fixture_notice2', 've_fixture_about', 've_fixture_footer' ) as $option ) {
			update_option( $option, 'first', true );
		}
		// A comment on charlie the REST API serves on its own, and a category to move under
		// another one (its REST item shows the parent).
		self::$ids['comment']   = wp_insert_comment( array( 'comment_post_ID' => self::$ids['charlie'], 'comment_content' => 'Harness first comment', 'comment_author' => 'Reader', 'comment_author_email' => 'reader@example.com', 'comment_approved' => 1 ) );
		self::$ids['subcat']    = wp_insert_term( 'Harness subcategory', 'category' )['term_id'];
		self::$ids['attachment'] = $att;
		self::$ids['block']      = $block;
		self::$ids['gallery']    = $gallery;
		self::$ids['styles']     = (int) $styles['ID'];
		self::$ids['loop_host']  = $loop_host;
		// The term lists that print counts: the Categories block with counts and a tag cloud.
		self::$ids['term_lists'] = wp_insert_post( array( 'post_type' => 'page', 'post_status' => 'publish', 'post_title' => 'Term lists', 'post_name' => 'term-lists', 'post_content' => '<!-- wp:categories {"showPostCounts":true} /--><!-- wp:tag-cloud /-->' ) );
		\VarnishEdge\Plugin::instance()->queue->dispatch();
	}

	private static function views() {
		$ids   = self::$ids;
		$views = array(
			'home'            => '/',
			'home page 2'     => '/page/2/',
			'single'          => '/2026/03/charlie/',
			'single sibling'  => '/2026/04/delta/',
			'page'            => '/about/',
			'latest posts'    => '/latest/',
			'category'        => '/category/sports/',
			'category other'  => '/category/news/',
			'tag'             => '/tag/featured/',
			'author'          => '/author/admin/',
			'author other'    => '/author/alice/',
			'date'            => '/2026/03/',
			'feed'            => '/feed/',
			'comments feed'   => '/comments/feed/',
			'search'          => '/?s=story',
			'404'             => self::live_path(),
			'rest item'       => '/wp-json/wp/v2/posts/' . $ids['charlie'],
			'rest collection' => '/wp-json/wp/v2/posts',
			'rest categories' => '/wp-json/wp/v2/categories',
			'sitemap'         => '/wp-sitemap-posts-post-1.xml',
			'author feed'     => '/author/admin/feed/',
			'gallery post'    => '/2020/01/gallery/',
			'attachment page' => wp_make_link_relative( get_permalink( $ids['attachment'] ) ),
			'query loop'      => '/2020/01/loop-host/',
			// What an anonymous reader of the REST API and the feeds sees.
			'post comments feed'  => '/2026/03/charlie/feed/',
			'category feed'       => '/category/sports/feed/',
			'tag feed'            => '/tag/featured/feed/',
			'author feed renamed' => '/author/harness-admin/feed/',
			'rest embed'          => '/wp-json/wp/v2/posts/' . $ids['charlie'] . '?_embed',
			'rest filtered'       => '/wp-json/wp/v2/posts?categories=' . $ids['sports'],
			'rest search'         => '/wp-json/wp/v2/search?search=story',
			'rest pages'          => '/wp-json/wp/v2/pages',
			'rest comments'       => '/wp-json/wp/v2/comments',
			'rest comment'        => '/wp-json/wp/v2/comments/' . $ids['comment'],
			'rest post comments'  => '/wp-json/wp/v2/comments?post=' . $ids['charlie'],
			'rest other comments' => '/wp-json/wp/v2/comments?post=' . $ids['echo'],
			'rest tags'           => '/wp-json/wp/v2/tags',
			'rest category'       => '/wp-json/wp/v2/categories/' . $ids['subcat'],
			'rest media'          => '/wp-json/wp/v2/media',
			'rest users'          => '/wp-json/wp/v2/users',
			'rest user'           => '/wp-json/wp/v2/users/1',
			'rest types'          => '/wp-json/wp/v2/types',
			// Term counts: a tag's and a category's REST item, a page listing terms with counts.
			'rest tag'            => '/wp-json/wp/v2/tags/' . $ids['featured'],
			'rest sports'         => '/wp-json/wp/v2/categories/' . $ids['sports'],
			'term lists'          => '/term-lists/',
		);
		return $views;
	}

	/** Where the scheduled post will appear once live (a 404 until then). */
	private static function live_path() {
		return '/' . gmdate( 'Y/m', self::live_time() ) . '/harness-live/';
	}

	private static function live_time() {
		return strtotime( gmdate( 'Y-m-d 00:00:00' ) ) + 86400 * 2 + 3600 * 10;
	}

	/** Output with per-request noise removed. */
	private static function normalize( array $response ) {
		$location = $response['headers']['location'][0] ?? '';
		// WordPress picks one of three Gravatar hosts at random for a commenter without email.
		$body = preg_replace( '/\b[0-2](?=\.gravatar\.com)/', 'N', $response['body'] );
		return $response['status'] . "\n" . $location . "\n" . $body;
	}

	private function render_all() {
		$out = array();
		foreach ( self::views() as $name => $path ) {
			$r            = Environment::fetch( $path );
			$out[ $name ] = array(
				'url'    => Environment::home() . $path,
				'keys'   => Environment::keys_of( $r ),
				'output' => self::normalize( $r ),
				'status' => $r['status'],
				// Only what carries a long TTL can stay stale; the rest (a 401 for a comment
				// awaiting moderation) lives for the microcache's second.
				'long'   => isset( $r['headers']['surrogate-control'] ),
			);
		}
		return $out;
	}

	/**
	 * Edits that take something out of public view, with a text only it shows: every view that
	 * showed the text before and not after must be invalidated hard (no grace copy served).
	 */
	const REMOVALS = array(
		'unpublish'         => 'Hotel draft',
		'comment unapprove' => 'Harness first comment',
		'comment spam'      => 'Harness first comment',
		'comment trash'     => 'Harness first comment',
		'comment delete'    => 'Harness first comment',
		'tag delete'        => 'harness-tag',
		'trash'             => 'Delta',
		'delete'            => 'Harness live',
	);

	private function invalidated( array $view, array $events, bool $hard_only = false ) {
		foreach ( $events as $event ) {
			if ( $hard_only && ! empty( $event['soft'] ) ) {
				continue;
			}
			switch ( $event['kind'] ) {
				case 'all':
					return true;
				case 'tags':
					if ( array_intersect( $event['tags'], $view['keys'] ) ) {
						return true;
					}
					break;
				case 'urls':
					if ( in_array( $view['url'], $event['urls'], true ) ) {
						return true;
					}
					break;
				case 'prefix':
					foreach ( $event['urls'] as $prefix ) {
						if ( 0 === strpos( $view['url'], $prefix ) ) {
							return true;
						}
					}
			}
		}
		return false;
	}

	private function edits() {
		$ids = self::$ids;
		$c   = $ids['charlie'];
		return array(
			'update body'         => function () use ( $c ) {
				wp_update_post( array( 'ID' => $c, 'post_content' => '<!-- wp:paragraph --><p>Charlie story, revised.</p><!-- /wp:paragraph -->' ) );
			},
			'double save (no-op)' => function () use ( $c ) {
				wp_update_post( array( 'ID' => $c ) );
				wp_update_post( array( 'ID' => $c ) );
			},
			'change slug'         => function () use ( $c ) {
				wp_update_post( array( 'ID' => $c, 'post_name' => 'charlie-renamed' ) );
			},
			'change category'     => function () use ( $c, $ids ) {
				wp_set_post_categories( $c, array( $ids['news'] ) );
			},
			'publish'             => function () use ( $ids ) {
				wp_update_post( array( 'ID' => $ids['draft'], 'post_status' => 'publish', 'post_date' => '2026-03-20 10:00:00', 'post_date_gmt' => '2026-03-20 10:00:00', 'edit_date' => true ) );
			},
			'unpublish'           => function () use ( $ids ) {
				wp_update_post( array( 'ID' => $ids['draft'], 'post_status' => 'draft' ) );
			},
			'schedule'            => function () {
				$when = gmdate( 'Y-m-d H:i:s', self::live_time() );
				self::$ids['live'] = wp_insert_post( array( 'post_title' => 'Harness live', 'post_name' => 'harness-live', 'post_status' => 'future', 'post_date' => $when, 'post_date_gmt' => $when, 'post_content' => 'Scheduled.' ) );
			},
			'go live'             => function () {
				wp_publish_post( self::$ids['live'] );
			},
			'comment'             => function () use ( $c ) {
				wp_insert_comment( array( 'comment_post_ID' => $c, 'comment_content' => 'Harness comment', 'comment_author' => 'Visitor', 'comment_author_email' => 'visitor@example.com', 'comment_approved' => 1 ) );
			},
			'comment edit'        => function () use ( $ids ) {
				wp_update_comment( array( 'comment_ID' => $ids['comment'], 'comment_content' => 'Harness first comment, corrected' ) );
			},
			'comment unapprove'   => function () use ( $ids ) {
				wp_set_comment_status( $ids['comment'], 'hold' );
			},
			'comment approve'     => function () use ( $ids ) {
				wp_set_comment_status( $ids['comment'], 'approve' );
			},
			'comment spam'        => function () use ( $ids ) {
				wp_spam_comment( $ids['comment'] );
			},
			'comment unspam'      => function () use ( $ids ) {
				wp_unspam_comment( $ids['comment'] );
			},
			'comment trash'       => function () use ( $ids ) {
				wp_trash_comment( $ids['comment'] );
			},
			'comment untrash'     => function () use ( $ids ) {
				wp_untrash_comment( $ids['comment'] );
			},
			'comment delete'      => function () use ( $ids ) {
				wp_delete_comment( $ids['comment'], true );
			},
			'tag create'          => function () {
				self::$ids['harness_tag'] = wp_insert_term( 'Harness tag', 'post_tag' )['term_id'];
			},
			'tag a post'          => function () use ( $c ) {
				wp_set_post_tags( $c, array( 'Harness tag' ), true );
			},
			'move between tags'   => function () use ( $ids ) {
				wp_set_post_tags( $ids['bravo'], array( 'Harness tag' ) ); // Leaves Featured, its only post.
			},
			'tag delete'          => function () {
				wp_delete_term( self::$ids['harness_tag'], 'post_tag' );
			},
			'category reparent'   => function () use ( $ids ) {
				wp_update_term( $ids['subcat'], 'category', array( 'parent' => $ids['news'] ) );
			},
			'media upload'        => function () {
				self::$ids['upload'] = wp_insert_attachment( array( 'post_title' => 'Harness upload', 'post_mime_type' => 'image/jpeg', 'post_status' => 'inherit' ), 'harness-upload.jpg' );
			},
			'media delete'        => function () {
				wp_delete_attachment( self::$ids['upload'], true );
			},
			'author slug'         => function () {
				wp_update_user( array( 'ID' => 1, 'user_nicename' => 'harness-admin' ) );
			},
			'author slug back'    => function () {
				wp_update_user( array( 'ID' => 1, 'user_nicename' => 'admin' ) );
			},
			'change author'       => function () use ( $c, $ids ) {
				wp_update_post( array( 'ID' => $c, 'post_author' => $ids['alice'] ) );
			},
			'edit term'           => function () use ( $ids ) {
				wp_update_term( $ids['sports'], 'category', array( 'name' => 'Sports and Games' ) );
			},
			'edit menu'           => function () {
				wp_insert_post( array( 'post_type' => 'wp_navigation', 'post_status' => 'publish', 'post_title' => 'Harness menu', 'post_content' => '<!-- wp:navigation-link {"label":"Harness link","url":"/about/","kind":"custom"} /-->' ) );
			},
			'price in a save'     => function () use ( $ids ) {
				// The block editor's meta box save: only the custom field differs.
				wp_update_post( array( 'ID' => $ids['delta'], 'meta_input' => array( 'price' => '12' ) ) );
			},
			'price outside save'  => function () use ( $ids ) {
				// A stock or price change made by code (an order), no post save.
				update_post_meta( $ids['delta'], 'price', '13' );
			},
			'display name'        => function () {
				wp_update_user( array( 'ID' => 1, 'display_name' => 'Site Admin' ) );
			},
			'attachment alt+caption' => function () use ( $ids ) {
				// As the media modal saves: alt text meta, then the attachment (caption).
				update_post_meta( $ids['attachment'], '_wp_attachment_image_alt', 'Corrected alt' );
				wp_update_post( array( 'ID' => $ids['attachment'], 'post_excerpt' => 'Corrected caption' ) );
			},
			'reusable block'      => function () use ( $ids ) {
				wp_update_post( array( 'ID' => $ids['block'], 'post_content' => '<!-- wp:paragraph --><p>Shared block, second version.</p><!-- /wp:paragraph -->' ) );
			},
			'global styles'       => function () use ( $ids ) {
				wp_update_post( array( 'ID' => $ids['styles'], 'post_content' => wp_json_encode( array( 'version' => 2, 'isGlobalStylesUserThemeJSON' => true, 'styles' => array( 'color' => array( 'background' => '#fbf3e4' ) ) ) ) ) );
			},
			'template'            => function () {
				$single = file_get_contents( get_theme_file_path( 'templates/single.html' ) );
				$id     = wp_insert_post( array( 'post_type' => 'wp_template', 'post_status' => 'publish', 'post_name' => 'single', 'post_title' => 'Single', 'post_content' => str_replace( '<!-- wp:post-content', '<!-- wp:paragraph --><p>Harness template</p><!-- /wp:paragraph --><!-- wp:post-content', $single ) ) );
				wp_set_post_terms( $id, array( get_stylesheet() ), 'wp_theme' );
			},
			'template part'       => function () {
				$id = wp_insert_post( array( 'post_type' => 'wp_template_part', 'post_status' => 'publish', 'post_name' => 'footer', 'post_title' => 'Footer', 'post_content' => '<!-- wp:paragraph --><p>Harness footer</p><!-- /wp:paragraph -->' ) );
				wp_set_post_terms( $id, array( get_stylesheet() ), 'wp_theme' );
				wp_set_post_terms( $id, array( 'footer' ), 'wp_template_part_area' );
			},
			'navigation'          => function () {
				$nav = get_posts( array( 'post_type' => 'wp_navigation', 'numberposts' => 1 ) );
				wp_update_post( array( 'ID' => $nav[0]->ID, 'post_content' => '<!-- wp:navigation-link {"label":"Harness link renamed","url":"/about/","kind":"custom"} /-->' ) );
			},
			'site title'          => function () {
				update_option( 'blogname', 'Harness Site Renamed' );
			},
			'tagline'             => function () {
				update_option( 'blogdescription', 'Harness tagline' );
			},
			'site icon'           => function () use ( $ids ) {
				update_option( 'site_icon', $ids['attachment'] );
			},
			'site logo'           => function () use ( $ids ) {
				update_option( 'site_logo', $ids['attachment'] );
			},
			'api: purge keys'     => function () {
				update_option( 've_fixture_notice2', 'second' );
				do_action( 'varnish_edge_purge_keys', array( 've-notice' ), false, 'notice changed' );
			},
			'api: option mapped'  => function () {
				update_option( 've_fixture_notice', 'second' ); // varnish_edge_option_keys maps it to ve-notice.
			},
			'api: purge urls'     => function () {
				update_option( 've_fixture_about', 'second' );
				do_action( 'varnish_edge_purge_urls', array( '/about/' ), false, 'about note changed' );
			},
			'api: purge all'      => function () {
				update_option( 've_fixture_footer', 'second' );
				do_action( 'varnish_edge_purge_all', 'footer text changed' );
			},
			'plugin activation'   => function () {
				$result = activate_plugin( Fixtures::PLUGIN );
				if ( is_wp_error( $result ) ) {
					throw new RuntimeException( $result->get_error_message() );
				}
			},
			'trash'               => function () use ( $ids ) {
				wp_trash_post( $ids['delta'] );
			},
			'delete'              => function () {
				wp_delete_post( self::$ids['live'], true );
			},
		);
	}

	/** Put the fixture back for the other test classes. */
	public static function tearDownAfterClass(): void {
		$ids = self::$ids;
		wp_untrash_post( $ids['delta'] );
		wp_update_post( array( 'ID' => $ids['delta'], 'post_status' => 'publish' ) );
		wp_update_post( array( 'ID' => $ids['charlie'], 'post_name' => 'charlie', 'post_author' => 1 ) );
		wp_set_post_categories( $ids['charlie'], array( $ids['sports'] ) );
		wp_set_post_tags( $ids['bravo'], array( 'Featured' ) );
		wp_delete_post( $ids['term_lists'], true );
		wp_update_term( $ids['sports'], 'category', array( 'name' => 'Sports' ) );
		wp_update_user( array( 'ID' => 1, 'display_name' => 'admin' ) );
		delete_post_meta( $ids['delta'], 'price' );
		deactivate_plugins( Fixtures::PLUGIN );
		foreach ( array( 've_fixture_notice', 've_fixture_notice2', 've_fixture_about', 've_fixture_footer' ) as $option ) {
			delete_option( $option );
		}
		foreach ( self::$identity as $option => $value ) {
			null === $value ? delete_option( $option ) : update_option( $option, $value );
		}
		foreach ( array( 'wp_template', 'wp_template_part', 'wp_global_styles', 'wp_block' ) as $type ) {
			foreach ( get_posts( array( 'post_type' => $type, 'post_status' => 'any', 'numberposts' => -1 ) ) as $post ) {
				wp_delete_post( $post->ID, true );
			}
		}
		wp_delete_post( $ids['gallery'], true );
		wp_delete_post( $ids['loop_host'], true );
		wp_delete_attachment( $ids['attachment'], true );
		wp_delete_term( $ids['subcat'], 'category' );
		wp_update_user( array( 'ID' => 1, 'user_nicename' => 'admin' ) );
		foreach ( get_posts( array( 'post_type' => 'wp_navigation', 'post_status' => 'any', 'numberposts' => -1 ) ) as $nav ) {
			wp_delete_post( $nav->ID, true );
		}
		foreach ( get_comments( array( 'post_id' => $ids['charlie'] ) ) as $comment ) {
			wp_delete_comment( $comment, true );
		}
		\VarnishEdge\Plugin::instance()->queue->dispatch();
		parent::tearDownAfterClass();
	}

	public function test_every_changed_view_is_invalidated_and_unchanged_views_are_not() {
		$before = $this->render_all();
		$again  = $this->render_all();
		foreach ( $before as $name => $view ) {
			$this->assertSame( $view['output'], $again[ $name ]['output'], "view '$name' must render deterministically" );
			$this->assertNotEmpty( $view['keys'], "view '$name' carries keys" );
		}
		$this->assertSame( 404, $before['404']['status'] );
		$this->assertStringContainsString( 'wp-block-post-template', $before['query loop']['output'], 'the loop host renders its query loop' );
		$this->assertStringContainsString( '>Golf</a>', $before['query loop']['output'], 'the query loop lists recent posts' );

		$under_total = 0;
		$soft_total  = 0;
		$over_total  = 0;
		$over_bans   = 0;
		$bans        = 0;
		$changed_total = 0;
		$lines       = array();
		foreach ( $this->edits() as $edit => $apply ) {
			Environment::clear_webhooks();
			// Each edit starts in a new second: post_modified and the dates views print from it
			// (the REST item, feeds' lastBuildDate, the sitemap's lastmod since WordPress 6.5)
			// have a one-second resolution, so whether an edit changes them must not depend on
			// how fast the edit before it ran (a no-op save in the same second changed nothing).
			$second = time();
			while ( time() === $second ) {
				usleep( 20000 );
			}
			$apply();
			$this->end_request();
			$events = Environment::accepted_events();
			$ban    = in_array( 'all', array_column( $events, 'kind' ), true );
			$after  = $this->render_all();
			$under  = array();
			$over   = array();
			$soft   = array(); // Removed content that only a soft purge reached.
			$changed = 0;
			foreach ( $before as $name => $view ) {
				if ( ! $view['long'] ) {
					continue;
				}
				$did_change  = $view['output'] !== $after[ $name ]['output'];
				$invalidated = $this->invalidated( $view, $events );
				$changed    += $did_change ? 1 : 0;
				if ( $did_change && ! $invalidated ) {
					$under[] = $name;
					if ( getenv( 'VARNISH_EDGE_DIFF_DIR' ) ) {
						$base = getenv( 'VARNISH_EDGE_DIFF_DIR' ) . '/' . preg_replace( '/\W+/', '_', "$edit-$name" );
						file_put_contents( "$base.before", $view['output'] );
						file_put_contents( "$base.after", $after[ $name ]['output'] );
					}
				}
				if ( ! $did_change && $invalidated ) {
					$over[] = $name;
				}
				$gone = self::REMOVALS[ $edit ] ?? null;
				if ( null !== $gone && false !== strpos( $view['output'], $gone ) && false === strpos( $after[ $name ]['output'], $gone )
					&& ! $this->invalidated( $view, $events, true ) ) {
					$soft[] = $name;
				}
			}
			self::$report[ $edit ] = array(
				'changed' => $changed,
				'under'   => $under,
				'soft'    => $soft,
				'over'    => $over,
				'webhooks' => count( Environment::webhooks() ),
				'ban'      => $ban,
			);
			$under_total   += count( $under );
			$soft_total    += count( $soft );
			$over_total    += count( $over );
			$over_bans     += $ban ? count( $over ) : 0;
			$bans          += $ban ? 1 : 0;
			$changed_total += $changed;
			$lines[]        = sprintf( '  %-22s changed %2d  under %d  over %d%s%s%s%s', $edit, $changed, count( $under ), count( $over ), $ban ? '  (site-wide ban)' : '', $under ? '  UNDER: ' . implode( ', ', $under ) : '', $soft ? '  REMOVED BUT SOFT: ' . implode( ', ', $soft ) : '', $over ? '  over: ' . implode( ', ', $over ) : '' );
			$before = $after;
		}
		$views = count( self::views() );
		$edits = count( $this->edits() );
		$summary = sprintf( 'conformance: %d views x %d edits = %d checks, %d changed, under-invalidation %d, removals purged soft %d, over-invalidation %d (%d of them by %d site-wide bans)', $views, $edits, $views * $edits, $changed_total, $under_total, $soft_total, $over_total, $over_bans, $bans );
		fwrite( STDOUT, "\n" . implode( "\n", $lines ) . "\n" . $summary . "\n" );
		if ( getenv( 'VARNISH_EDGE_REPORT' ) ) {
			$report = array(
				'date'      => gmdate( 'c' ),
				'wordpress' => get_bloginfo( 'version' ),
				'php'       => PHP_VERSION,
				'summary'   => $summary,
				'counts'    => array(
					'views'       => $views,
					'edits'       => $edits,
					'checks'      => $views * $edits,
					'changed'     => $changed_total,
					'under'       => $under_total,
					'soft'        => $soft_total,
					'over'        => $over_total,
					'over_by_ban' => $over_bans,
					'bans'        => $bans,
				),
				'edit_rows' => self::$report,
			);
			file_put_contents( getenv( 'VARNISH_EDGE_REPORT' ), (string) wp_json_encode( $report, JSON_PRETTY_PRINT ) );
		}
		$this->assertSame( 0, $under_total, 'no stale view after any edit' . "\n" . implode( "\n", $lines ) );
		$this->assertSame( 0, $soft_total, 'what was removed is purged hard wherever it showed' . "\n" . implode( "\n", $lines ) );
		$this->assertGreaterThan( 0, $changed_total, 'the edits really changed views' );
		$this->assertLessThanOrEqual( 1, self::$report['double save (no-op)']['webhooks'], 'two saves in one request: at most one batch' );
		// Site-wide bans (global styles, templates, plugins, purge_all) are over-invalidation by
		// design; the key-based edits must stay precise. What remains is by design too: the
		// `search` listing and REST query keys (r-q) go on any text change, an author's `u-N` on
		// any profile change, a post's comment key on each of its comments: 55 of 1,848 checks on
		// WordPress 6.1, 57 on 7.1 when this bound was set.
		$this->assertLessThanOrEqual( 70, $over_total - $over_bans, 'over-invalidation of key-based edits stays small' . "\n" . implode( "\n", $lines ) );
		$this->assertSame( 5, $bans, 'only global styles, templates, template parts, purge_all and a plugin activation ban the site' . "\n" . implode( "\n", $lines ) );
	}
}
